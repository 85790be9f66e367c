# Terraform 1.12 and later (tested with Terraform 1.15.0 and OpenTofu v1.12.6): import by
# resource identity, the id (the class names joined by commas). The first apply records this
# resource as the classes' owner.
import {
  to = hyperpod_cluster_scheduler_config.example
  identity = {
    id = "inference,training"
  }
}

resource "hyperpod_cluster_scheduler_config" "example" {
  priority_classes = [
    { name = "inference", weight = 100 },
    { name = "training", weight = 75 },
  ]
}
