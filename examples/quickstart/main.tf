# Quickstart: what the cluster has, per instance type. `make demo` applies this against the
# local control plane (or the cluster KUBE_CONFIG_PATH points at).
terraform {
  required_providers {
    hyperpod = {
      source = "quotaworks/hyperpod"
    }
  }
}

# Connection settings come from KUBE_CONFIG_PATH (set by `make demo`).
provider "hyperpod" {}

variable "instance_types" {
  type        = list(string)
  description = "Instance types to report on."
  default     = ["ml.g5.12xlarge", "ml.p5.48xlarge", "ml.trn1.32xlarge", "ml.c5.4xlarge"]
}

data "hyperpod_instance_type_capacity" "fleet" {
  for_each      = toset(var.instance_types)
  instance_type = each.key
}

output "capacity" {
  description = "Nodes and resources per instance type, and how much of it quotas already claim."
  value = {
    for name, c in data.hyperpod_instance_type_capacity.fleet : name => {
      nodes                    = c.node_count
      schedulable_nodes        = c.schedulable_node_count
      accelerator              = c.accelerator_type
      total_accelerators       = c.total_accelerators
      total_vcpu               = c.total_vcpu
      total_memory_in_gib      = c.total_memory_in_gib
      unallocated_accelerators = c.unallocated_accelerators
      unallocated_vcpu         = c.unallocated_vcpu
      unallocated_memory_gib   = c.unallocated_memory_in_gib
    }
  }
}

output "summary" {
  description = "The same as a table."
  value = join("\n", concat(
    [format("%-18s %5s %11s %-10s %6s %8s %9s", "instance type", "nodes", "schedulable", "accel", "accels", "vCPU", "GiB")],
    [for name in sort(keys(data.hyperpod_instance_type_capacity.fleet)) : format("%-18s %5d %11d %-10s %6d %8.1f %9.1f",
      name,
      data.hyperpod_instance_type_capacity.fleet[name].node_count,
      data.hyperpod_instance_type_capacity.fleet[name].schedulable_node_count,
      coalesce(data.hyperpod_instance_type_capacity.fleet[name].accelerator_type, "-"),
      data.hyperpod_instance_type_capacity.fleet[name].total_accelerators,
      data.hyperpod_instance_type_capacity.fleet[name].total_vcpu,
      data.hyperpod_instance_type_capacity.fleet[name].total_memory_in_gib,
    )],
  ))
}
