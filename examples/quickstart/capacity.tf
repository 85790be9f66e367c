# What the cluster has, per instance type, and a check that the quotas in main.tf fit into it.

locals {
  instance_types = ["ml.g5.12xlarge", "ml.p5.48xlarge", "ml.trn1.32xlarge", "ml.c5.4xlarge"]

  quotas = [
    hyperpod_compute_quota.ml_research,
    hyperpod_compute_quota.evaluation,
    hyperpod_compute_quota.inference,
    hyperpod_compute_quota.data_prep,
  ]

  # What these quotas claim per instance type, summed from their planned amounts (known before apply).
  entries_by_type = { for e in flatten(local.quotas[*].resources) : e.instance_type => e... }
  claimed = {
    for type, entries in local.entries_by_type : type => {
      accelerators  = sum(entries[*].accelerators)
      vcpu          = sum(entries[*].vcpu)
      memory_in_gib = sum(entries[*].memory_in_gib)
    }
  }

  # Per instance type: what the nodes have next to what the quotas claim.
  fit = {
    for type, c in data.hyperpod_instance_type_capacity.fleet : type => {
      have  = { accelerators = c.total_accelerators, vcpu = c.total_vcpu, memory_in_gib = c.total_memory_in_gib }
      claim = lookup(local.claimed, type, { accelerators = 0, vcpu = 0, memory_in_gib = 0 })
    }
  }
  overcommitted = [
    for type, f in local.fit : format("%s: quotas claim %d accelerators, %g vCPU, %g GiB; the nodes have %d, %g, %g",
    type, f.claim.accelerators, f.claim.vcpu, f.claim.memory_in_gib, f.have.accelerators, f.have.vcpu, f.have.memory_in_gib)
    if f.claim.accelerators > f.have.accelerators || f.claim.vcpu > f.have.vcpu || f.claim.memory_in_gib > f.have.memory_in_gib
  ]
}

# Read during plan. Its allocated_* and unallocated_* count the nominal quotas of every
# ClusterQueue in the cluster, these included once applied, so the check below compares the
# quotas' own sums with total_* instead.
data "hyperpod_instance_type_capacity" "fleet" {
  for_each      = toset(local.instance_types)
  instance_type = each.key
}

# A warning, not an error: Kueue accepts quotas larger than the nodes, jobs just never get
# all of it.
check "quotas_fit_the_nodes" {
  assert {
    condition     = length(setsubtract(keys(local.claimed), local.instance_types)) == 0
    error_message = "Add ${join(", ", setsubtract(keys(local.claimed), local.instance_types))} to local.instance_types so its capacity is checked."
  }

  assert {
    condition     = length(local.overcommitted) == 0
    error_message = "The quotas promise more than the nodes have:\n${join("\n", local.overcommitted)}"
  }
}
