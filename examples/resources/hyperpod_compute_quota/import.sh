# The import ID is the team: this imports the ClusterQueue hyperpod-ns-ml-research-clusterqueue.
terraform import hyperpod_compute_quota.example ml-research
