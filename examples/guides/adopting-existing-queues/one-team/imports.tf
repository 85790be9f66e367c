# Terraform 1.5 and later: the import ID is the team. terraform plan reads the existing
# Namespace with its LocalQueue, and the ClusterQueue; terraform apply takes them over.
import {
  to = hyperpod_team_namespace.research
  id = "guide-research"
}

import {
  to = hyperpod_compute_quota.research
  id = "guide-research"
}
