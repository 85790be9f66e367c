# Terraform 1.12 and later (tested with Terraform 1.15.0 and OpenTofu v1.12.6): import by
# resource identity, the team. The first apply records this resource as the owner of the
# Namespace and LocalQueue.
import {
  to = hyperpod_team_namespace.example
  identity = {
    team = "ml-research"
  }
}

resource "hyperpod_team_namespace" "example" {
  team = "ml-research"
}
