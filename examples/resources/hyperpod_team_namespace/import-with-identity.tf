# Terraform 1.12 and later (and OpenTofu with identity support): import by resource identity,
# the team. The first apply records this resource as the owner of the Namespace and LocalQueue.
import {
  to = hyperpod_team_namespace.example
  identity = {
    team = "ml-research"
  }
}

resource "hyperpod_team_namespace" "example" {
  team = "ml-research"
}
