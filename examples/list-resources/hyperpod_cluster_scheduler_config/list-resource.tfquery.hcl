# The cluster's scheduler config: its priority classes, and with task_governance its fair share
# and idle resource sharing.
list "hyperpod_cluster_scheduler_config" "policy" {
  provider         = hyperpod
  include_resource = true
}
