data "hyperpod_instance_type_capacity" "p5" {
  instance_type = "ml.p5.48xlarge"
}

output "p5_free_gpus" {
  description = "GPUs of ml.p5.48xlarge nodes that no team's nominal quota claims yet."
  value       = data.hyperpod_instance_type_capacity.p5.unallocated_accelerators
}
