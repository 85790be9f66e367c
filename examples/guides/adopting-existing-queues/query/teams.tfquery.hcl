# teams.tfquery.hcl, beside the configuration's provider block: every team of the platform
# (teams named ml-...), their namespaces and the cluster's priority classes. include_resource
# shows what an import of each would save; -generate-config-out turns it on anyway.
list "hyperpod_compute_quota" "team" {
  provider         = hyperpod
  include_resource = true
  limit            = 1000 # Terraform stops at 100 results without it

  config {
    team_prefix = "ml-"
  }
}

list "hyperpod_team_namespace" "team" {
  provider         = hyperpod
  include_resource = true
  limit            = 1000

  config {
    team_prefix = "ml-"
  }
}

list "hyperpod_cluster_scheduler_config" "policy" {
  provider         = hyperpod
  include_resource = true
}
