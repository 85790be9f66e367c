# { accelerators = 8, accelerator_type = "A100 40GB", accelerator_resource = "nvidia.com/gpu",
#   vcpu = 96, memory_in_gib = 1152, efa = 4, mig_profiles = ["mig-1g.5gb", ...] }
output "p4d" {
  value = provider::hyperpod::instance_type("ml.p4d.24xlarge")
}

# A quota of all the GPUs of one instance, without hard-coding how many (8 on ml.p5.48xlarge).
resource "hyperpod_compute_quota" "one_p5_of_gpus" {
  name              = "vision-quota"
  team              = "vision"
  fair_share_weight = 1 # it borrows (the default strategy): see fair_share_weight

  resources = [{
    instance_type = "ml.p5.48xlarge"
    accelerators  = provider::hyperpod::instance_type("ml.p5.48xlarge").accelerators
  }]
}
