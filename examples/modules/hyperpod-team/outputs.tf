output "team" {
  description = "The team."
  value       = hyperpod_compute_quota.this.team
}

output "namespace" {
  description = "The team's namespace, hyperpod-ns-<team>: its jobs run here."
  value       = hyperpod_team_namespace.this.namespace
}

output "local_queue_name" {
  description = "The team's LocalQueue, hyperpod-ns-<team>-localqueue: jobs select it with the label kueue.x-k8s.io/queue-name."
  value       = hyperpod_team_namespace.this.local_queue_name
}

output "cluster_queue_name" {
  description = "The team's ClusterQueue, hyperpod-ns-<team>-clusterqueue (the compute quota)."
  value       = hyperpod_compute_quota.this.cluster_queue_name
}

output "amounts" {
  description = "Per instance type, the amounts of the quota: what was configured and what the provider computed during plan for the rest (count is null unless configured; accelerator_partition null unless configured). Known at plan time."
  value = {
    for r in hyperpod_compute_quota.this.resources : r.instance_type => {
      count                 = r.count
      accelerators          = r.accelerators
      vcpu                  = r.vcpu
      memory_in_gib         = r.memory_in_gib
      efa                   = r.efa
      accelerator_partition = r.accelerator_partition
    }
  }
}
