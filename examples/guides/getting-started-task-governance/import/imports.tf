# Import blocks for the teams of main.tf. Keep only the blocks whose object exists: importing a
# missing one fails the plan. After the apply that imports them, these blocks may stay or go.

# The namespaces, by team.
import {
  for_each = var.teams
  to       = hyperpod_team_namespace.team[each.key]
  id       = each.key
}

# A quota by its team: the cluster's compute quota that targets the team.
import {
  to = hyperpod_compute_quota.team["guide-research"]
  id = "guide-research"
}

# A quota by its id, as list-quotas.sh shows it (12 lowercase letters and digits).
import {
  to = hyperpod_compute_quota.team["guide-inference"]
  id = "a1b2c3d4e5f6"
}
