# Terraform 1.5 and later: import the Namespace hyperpod-ns-ml-research (the ID is the team)
# during the next apply. A namespace this provider did not create (one made by hand, say) is
# adopted by that apply: it gets the provider's labels and the LocalQueue. With a task_governance
# block (a cluster with HyperPod's task-governance add-on), only the Namespace is taken over: the
# LocalQueue stays the add-on's.
import {
  to = hyperpod_team_namespace.example
  id = "ml-research"
}

resource "hyperpod_team_namespace" "example" {
  team = "ml-research"
}
