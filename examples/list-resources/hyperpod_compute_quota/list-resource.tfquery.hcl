# Every team quota whose team starts with "ml-", with the state an import would save
# (include_resource): `terraform query -generate-config-out=adopt.tf` writes a resource and an
# import block for each.
list "hyperpod_compute_quota" "ml" {
  provider         = hyperpod
  include_resource = true
  limit            = 1000 # Terraform stops at 100 results without it

  config {
    team_prefix = "ml-"
  }
}

# The quotas of one cohort with an ml.p5.48xlarge entry (a cluster that runs its own Kueue: the
# SageMaker API has no cohort).
list "hyperpod_compute_quota" "research_p5" {
  provider = hyperpod

  config {
    cohort        = "research"
    instance_type = "ml.p5.48xlarge"
  }
}
