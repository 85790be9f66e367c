# Terraform 1.12 and later (tested with Terraform 1.15.0 and OpenTofu v1.12.6): import by
# resource identity, the team. The first apply records this resource as the queue's owner.
import {
  to = hyperpod_compute_quota.example
  identity = {
    team = "ml-research"
  }
}

resource "hyperpod_compute_quota" "example" {
  name              = "ml-research"
  team              = "ml-research"
  fair_share_weight = 1
  resources         = [{ instance_type = "ml.p5.48xlarge", accelerators = 8 }]
}
