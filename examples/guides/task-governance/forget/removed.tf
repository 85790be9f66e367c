# Terraform 1.7 and later: forget every team's quota and the cluster policy without deleting
# anything. The cluster keeps its queues and priority classes, so admitted and pending jobs are
# untouched until the Kueue they belong to is replaced.
removed {
  from = hyperpod_compute_quota.team

  lifecycle {
    destroy = false
  }
}

removed {
  from = hyperpod_cluster_scheduler_config.policy

  lifecycle {
    destroy = false
  }
}
