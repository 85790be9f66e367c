output "teams" {
  description = "Per team: its namespace, the LocalQueue its jobs select (label kueue.x-k8s.io/queue-name), its ClusterQueue, and per instance type the amounts of its quota (computed during plan)."
  value = {
    for name, team in module.team : name => {
      namespace          = team.namespace
      local_queue_name   = team.local_queue_name
      cluster_queue_name = team.cluster_queue_name
      amounts            = team.amounts
    }
  }
}

output "priority_classes" {
  description = "Per class: the value of the job label kueue.x-k8s.io/priority-class."
  value       = { for c in hyperpod_cluster_scheduler_config.this.priority_classes : c.name => c.priority_class_name }
}

output "accelerators" {
  description = "Per instance type: what the nodes have and what the teams' quotas claim of it."
  value = {
    for type in local.instance_types : type => {
      nodes             = data.hyperpod_instance_type_capacity.this[type].node_count
      schedulable_nodes = data.hyperpod_instance_type_capacity.this[type].schedulable_node_count
      total             = data.hyperpod_instance_type_capacity.this[type].total_accelerators
      schedulable       = data.hyperpod_instance_type_capacity.this[type].schedulable_accelerators
      claimed           = local.planned_accelerators[type]
    }
  }
}
