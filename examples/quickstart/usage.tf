# Per-team usage, read from the status Kueue reports on each team's ClusterQueue. Data sources are
# read again on every plan and refresh: `terraform apply -refresh-only` then `terraform output
# usage_summary` shows what the teams' jobs hold right now (`make demo` does this after
# submitting jobs).

# One data source per team, each read after its quota is applied (it fails on a team without a
# ClusterQueue).
data "hyperpod_team_usage" "ml_research" {
  team       = hyperpod_compute_quota.ml_research.team
  depends_on = [hyperpod_compute_quota.ml_research]
}

data "hyperpod_team_usage" "evaluation" {
  team       = hyperpod_compute_quota.evaluation.team
  depends_on = [hyperpod_compute_quota.evaluation]
}

data "hyperpod_team_usage" "inference" {
  team       = hyperpod_compute_quota.inference.team
  depends_on = [hyperpod_compute_quota.inference]
}

data "hyperpod_team_usage" "data_prep" {
  team       = hyperpod_compute_quota.data_prep.team
  depends_on = [hyperpod_compute_quota.data_prep]
}

locals {
  team_usage = {
    for u in [
      data.hyperpod_team_usage.ml_research,
      data.hyperpod_team_usage.evaluation,
      data.hyperpod_team_usage.inference,
      data.hyperpod_team_usage.data_prep,
    ] : u.team => u
  }
  accelerator_resources = ["nvidia.com/gpu", "aws.amazon.com/neurondevice"]
  has_accelerators = {
    for team, u in local.team_usage :
    team => anytrue([for r in u.resources : contains(local.accelerator_resources, r.resource) && r.nominal > 0])
  }
  # The lines worth printing: accelerators, and CPU for the teams without any.
  usage_rows = flatten([
    for team in sort(keys(local.team_usage)) : [
      for r in local.team_usage[team].resources : merge(r, {
        team     = team
        admitted = local.team_usage[team].admitted_workloads
        pending  = local.team_usage[team].pending_workloads
      }) if r.nominal > 0 && (contains(local.accelerator_resources, r.resource) || (!local.has_accelerators[team] && r.resource == "cpu"))
    ]
  ])
}

output "usage" {
  description = "Per team: whether Kueue reports its queue active, its workload counts, and per instance type and resource the nominal quota, what is in use and what of it is borrowed."
  value = {
    for team, u in local.team_usage : team => {
      active    = u.active
      admitted  = u.admitted_workloads
      pending   = u.pending_workloads
      resources = { for r in u.resources : "${r.instance_type} ${r.resource}" => { nominal = r.nominal, in_use = r.in_use, borrowed = r.borrowed } if r.nominal > 0 || r.reserved > 0 }
    }
  }
}

output "usage_summary" {
  description = "The usage as a table."
  value = join("\n", concat(
    [format("%-12s %-17s %-28s %8s %7s %9s %9s %8s", "team", "instance type", "resource", "nominal", "in use", "borrowed", "admitted", "pending")],
    [for r in local.usage_rows : format("%-12s %-17s %-28s %8g %7g %9g %9d %8d", r.team, r.instance_type, r.resource, r.nominal, r.in_use, r.borrowed, r.admitted, r.pending)],
  ))
}
