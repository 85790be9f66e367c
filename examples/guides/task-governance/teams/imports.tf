# Take over what already exists. SageMaker path: quotas and a cluster policy made in the
# SageMaker console, with the AWS CLI or with CloudFormation, and the namespaces the add-on
# created for them. Kubernetes path: queues another tool wrote, or that the add-on left behind.
# Keep only the blocks whose object exists: importing a missing one fails the plan.

import {
  for_each = var.teams
  to       = hyperpod_team_namespace.team[each.key]
  id       = each.key
}

import {
  for_each = var.teams
  to       = hyperpod_compute_quota.team[each.key]
  id       = each.key # the team; on the SageMaker path the quota's id works too
}

import {
  to = hyperpod_cluster_scheduler_config.policy
  # Kubernetes path: the priority class names. SageMaker path: the cluster has one cluster
  # scheduler config, which is imported whatever the ID (its id, or the class names).
  id = "inference,training"
}
