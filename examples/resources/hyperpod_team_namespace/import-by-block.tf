# Terraform 1.5 and later: import the Namespace hyperpod-ns-ml-research (the ID is the team)
# during the next apply. A namespace this provider did not create (for example one that
# HyperPod's task-governance add-on made) is adopted by that apply: it gets the provider's
# labels and the LocalQueue.
import {
  to = hyperpod_team_namespace.example
  id = "ml-research"
}

resource "hyperpod_team_namespace" "example" {
  team = "ml-research"
}
