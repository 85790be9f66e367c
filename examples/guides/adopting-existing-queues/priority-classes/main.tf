# Existing WorkloadPriorityClasses inference-priority, training-priority and
# experimentation-priority, with their values as weights.
resource "hyperpod_cluster_scheduler_config" "policy" {
  priority_classes = [
    { name = "inference", weight = 100 },
    { name = "training", weight = 75 },
    { name = "experimentation", weight = 25 },
  ]
}
