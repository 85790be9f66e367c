# The import ID is the team: this imports the Namespace hyperpod-ns-ml-research and its
# LocalQueue hyperpod-ns-ml-research-localqueue.
terraform import hyperpod_team_namespace.example ml-research
