# The namespaces of the teams whose name starts with "ml-" and whose quota has an
# ml.p5.48xlarge entry.
list "hyperpod_team_namespace" "ml_p5" {
  provider         = hyperpod
  include_resource = true
  limit            = 1000

  config {
    team_prefix   = "ml-"
    instance_type = "ml.p5.48xlarge"
  }
}
