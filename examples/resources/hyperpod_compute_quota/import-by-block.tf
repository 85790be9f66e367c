# Terraform 1.5 and later: import the ClusterQueue hyperpod-ns-ml-research-clusterqueue (the ID
# is the team) during the next apply, then manage it like any other quota.
import {
  to = hyperpod_compute_quota.example
  id = "ml-research"
}

resource "hyperpod_compute_quota" "example" {
  name              = "ml-research"
  team              = "ml-research"
  fair_share_weight = 1 # a borrower's weight; the plan shows an update where the queue has another

  resources = [
    { instance_type = "ml.p5.48xlarge", accelerators = 8 },
  ]
}
