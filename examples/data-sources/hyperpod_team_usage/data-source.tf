data "hyperpod_team_usage" "ml_research" {
  team = "ml-research"
}

output "ml_research_borrowed_gpus" {
  description = "GPUs ml-research borrows from its cohort right now, per instance type."
  value = {
    for r in data.hyperpod_team_usage.ml_research.resources :
    r.instance_type => r.borrowed if r.resource == "nvidia.com/gpu"
  }
}
