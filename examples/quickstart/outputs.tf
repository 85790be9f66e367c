output "quotas" {
  description = "Per team and instance type, the amounts of its quota. Computed during plan, so `terraform plan` shows them before anything is applied."
  value = {
    for q in local.quotas : q.team => {
      for r in q.resources : r.instance_type => {
        accelerators  = r.accelerators
        vcpu          = r.vcpu
        memory_in_gib = r.memory_in_gib
        efa           = r.efa
      }
    }
  }
}

output "capacity" {
  description = "Per instance type: the nodes, what they have, what these quotas claim of it, and what is left for other teams."
  value = {
    for type, c in data.hyperpod_instance_type_capacity.fleet : type => {
      nodes             = c.node_count
      schedulable_nodes = c.schedulable_node_count
      accelerator       = c.accelerator_type
      total             = local.fit[type].have
      claimed           = local.fit[type].claim
      left              = { for k, v in local.fit[type].have : k => v - local.fit[type].claim[k] }
    }
  }
}

output "summary" {
  description = "The capacity as a table: what the nodes have, and what these quotas claim of it."
  value = join("\n", concat(
    [
      format("%-44s | %-22s | %s", "", "nodes have", "quotas claim"),
      format("%-16s %5s %11s %-9s | %6s %6s %8s | %6s %6s %8s", "instance type", "nodes", "schedulable", "accel", "accels", "vCPU", "GiB", "accels", "vCPU", "GiB"),
    ],
    [for type in sort(keys(local.fit)) : format("%-16s %5d %11d %-9s | %6d %6g %8g | %6d %6g %8g",
      type,
      data.hyperpod_instance_type_capacity.fleet[type].node_count,
      data.hyperpod_instance_type_capacity.fleet[type].schedulable_node_count,
      coalesce(data.hyperpod_instance_type_capacity.fleet[type].accelerator_type, "-"),
      local.fit[type].have.accelerators, local.fit[type].have.vcpu, local.fit[type].have.memory_in_gib,
      local.fit[type].claim.accelerators, local.fit[type].claim.vcpu, local.fit[type].claim.memory_in_gib,
    )],
  ))
}
