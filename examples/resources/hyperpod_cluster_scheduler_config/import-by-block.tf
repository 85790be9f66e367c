# Terraform 1.5 and later: adopt existing WorkloadPriorityClasses (made by hand or by another
# tool) during the next apply, which records this resource as their owner.
import {
  to = hyperpod_cluster_scheduler_config.example
  id = "inference,training"
}

resource "hyperpod_cluster_scheduler_config" "example" {
  priority_classes = [
    { name = "inference", weight = 100 },
    { name = "training", weight = 75 },
  ]
}
