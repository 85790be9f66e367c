# Existing WorkloadPriorityClasses inference-priority, training-priority and
# experimentation-priority, with their values as weights.

terraform {
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

resource "hyperpod_cluster_scheduler_config" "policy" {
  priority_classes = [
    { name = "inference", weight = 100 },
    { name = "training", weight = 75 },
    { name = "experimentation", weight = 25 },
  ]
}
