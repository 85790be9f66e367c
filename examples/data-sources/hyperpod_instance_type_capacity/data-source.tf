data "hyperpod_instance_type_capacity" "p5" {
  instance_type = "ml.p5.48xlarge"
}

output "p5_free_gpus" {
  description = "GPUs of healthy, schedulable ml.p5.48xlarge nodes that no team's nominal quota claims yet."
  value       = data.hyperpod_instance_type_capacity.p5.unallocated_schedulable_accelerators
}

output "p5_nodes_out_of_service" {
  description = "ml.p5.48xlarge nodes that HyperPod's health checks keep out of scheduling, by health status, and those not Ready."
  value = {
    by_health_status = data.hyperpod_instance_type_capacity.p5.unhealthy_node_counts
    not_ready        = data.hyperpod_instance_type_capacity.p5.not_ready_node_count
  }
}
