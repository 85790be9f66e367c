# What the healthy, schedulable nodes have per instance type, and a check that the teams' quotas
# do not promise more accelerators than that.

locals {
  # Every instance type some team has a quota on.
  instance_types = toset(flatten([for team in values(var.teams) : keys(team.allocations)]))

  # The accelerators the quotas claim per instance type, from the amounts the provider planned
  # (known before apply: a count of instances is turned into accelerators during plan).
  planned_accelerators = {
    for type in local.instance_types : type => sum([
      for team in values(module.team) : try(team.amounts[type].accelerators, 0)
    ])
  }

  overcommitted = [
    for type in sort(tolist(local.instance_types)) : format("%s: the quotas claim %d accelerators, the %d schedulable nodes have %d",
      type, local.planned_accelerators[type], data.hyperpod_instance_type_capacity.this[type].schedulable_node_count,
    data.hyperpod_instance_type_capacity.this[type].schedulable_accelerators)
    if local.planned_accelerators[type] > data.hyperpod_instance_type_capacity.this[type].schedulable_accelerators
  ]
}

# Read during plan. The check compares the quotas with schedulable_accelerators, what the healthy,
# schedulable nodes have, rather than with unallocated_schedulable_accelerators: those count every
# ClusterQueue in the cluster, these quotas included once they are applied.
data "hyperpod_instance_type_capacity" "this" {
  for_each      = local.instance_types
  instance_type = each.key
}

# A warning, not an error: Kueue accepts quotas larger than the nodes, jobs just never get all of
# it. Only accelerators are compared: on a real cluster the nodes' allocatable vCPU and memory are
# a little below the instance's figures (the kubelet and system reservations), so a quota of
# whole instances would always look larger than the nodes.
check "accelerators_fit_the_nodes" {
  assert {
    condition     = length(local.overcommitted) == 0
    error_message = "The teams' quotas promise more accelerators than the schedulable nodes have:\n${join("\n", local.overcommitted)}"
  }
}
