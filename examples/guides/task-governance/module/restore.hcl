# Step 3 with the teams in a module: the module block is back (and the cluster policy), with
# the new provider block. The namespaces are imported again; the quotas are created (on the
# SageMaker path) or, where the queues are still there, imported too.
import {
  for_each = var.teams
  to       = module.team[each.key].hyperpod_team_namespace.this
  id       = each.key
}
