# What a quota entry of 4 of the 8 H100s of an ml.p5.48xlarge gets:
# { accelerators = 4, vcpu = 96, memory_in_gib = 1024, efa = 32, accelerator_partition = null }
output "half_a_p5" {
  value = provider::hyperpod::quota_defaults("ml.p5.48xlarge", { accelerators = 4 })
}

# The amounts of every entry of a quota, before planning it. A whole resources entry can be
# passed as the allocation.
locals {
  research_resources = [
    { instance_type = "ml.p4d.24xlarge", accelerator_partition = { type = "mig-1g.5gb", count = 2 } },
    { instance_type = "ml.c5.9xlarge", memory_in_gib = 2.9 },
  ]
  research_amounts = {
    for r in local.research_resources : r.instance_type => provider::hyperpod::quota_defaults(r.instance_type, r)
  }
}

# ml.p4d.24xlarge: vcpu = 3.428, memory_in_gib = 41.142578125, efa = 4
# ml.c5.9xlarge:   vcpu = 1.45, memory_in_gib = 2.9, efa = 0
output "research_vcpu" {
  value = { for t, a in local.research_amounts : t => a.vcpu }
}

# Warn when a team's quota asks for more CPU than a budget allows.
check "research_cpu_budget" {
  assert {
    condition     = sum([for a in values(local.research_amounts) : a.vcpu]) <= 8
    error_message = "The research quota would get more than 8 vCPU."
  }
}
