import {
  for_each = local.teams
  to       = hyperpod_team_namespace.team[each.key]
  id       = each.value
}

import {
  for_each = local.teams
  to       = hyperpod_compute_quota.team[each.key]
  id       = each.value
}
