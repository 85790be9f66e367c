# The ratio rule, worked. Each entry of resources is sized by the first of count, accelerators,
# accelerator_partition, vcpu, memory_in_gib that it sets; that gives a ratio r of one instance,
# and every amount the entry leaves unset follows from r during terraform plan.

terraform {
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

# 4 of the 8 H100s of an ml.p5.48xlarge: r = 4/8 = 0.5.
#   vcpu = 0.5 x 192 = 96, memory_in_gib = 0.5 x 2048 = 1024, efa = ceil(0.5) x 32 = 32.
resource "hyperpod_compute_quota" "research" {
  name              = "guide-research"
  team              = "guide-research"
  description       = "Half of an ml.p5.48xlarge's H100s."
  fair_share_weight = 10

  resources = [
    { instance_type = "ml.p5.48xlarge", accelerators = 4 },
  ]
}

# CPU instances sized by memory.
#   80 GiB of ml.c5.4xlarge (16 vCPU, 32 GiB): r = 80/32 = 2.5, vcpu = 40, accelerators = 0, efa = 0.
#   2.9 GiB of ml.c5.9xlarge (36 vCPU, 72 GiB): r = 2.9/72, vcpu = 1.45 exactly (not 1.449).
resource "hyperpod_compute_quota" "data_prep" {
  name              = "guide-data-prep"
  team              = "guide-data-prep"
  fair_share_weight = 1

  resources = [
    { instance_type = "ml.c5.4xlarge", memory_in_gib = 80 },
    { instance_type = "ml.c5.9xlarge", memory_in_gib = 2.9 },
  ]
}

# GPU partitions: a MIG profile mig-<N>g.* uses N of a GPU's 7 slices, so
# r = count x N / (GPUs per instance x 7). accelerators (whole GPUs) stay 0.
#   2 x mig-1g.5gb on ml.p4d.24xlarge (8 A100, 96 vCPU, 1152 GiB, 4 EFA): r = 2/56 = 1/28,
#     vcpu = 96/28 = 3.428571... rounded down to 0.001 = 3.428,
#     memory_in_gib = 1152/28 = 41.142857... rounded down to whole MiB = 41.142578125 (42130 MiB),
#     efa = ceil(1/28) x 4 = 4.
#   7 x mig-3g.40gb on ml.p5.48xlarge: r = 21/56 = 0.375, vcpu = 72, memory_in_gib = 768, efa = 32.
resource "hyperpod_compute_quota" "notebooks" {
  name              = "guide-notebooks"
  team              = "guide-notebooks"
  fair_share_weight = 1

  resources = [
    { instance_type = "ml.p4d.24xlarge", accelerator_partition = { type = "mig-1g.5gb", count = 2 } },
    { instance_type = "ml.p5.48xlarge", accelerator_partition = { type = "mig-3g.40gb", count = 7 } },
  ]
}

# Whole instances: r = count = 2 of ml.g5.12xlarge (4 A10G, 48 vCPU, 192 GiB, 1 EFA).
#   accelerators = 8, vcpu = 96, memory_in_gib = 384, efa = 2.
resource "hyperpod_compute_quota" "inference" {
  name              = "guide-inference"
  team              = "guide-inference"
  fair_share_weight = 1

  resources = [
    { instance_type = "ml.g5.12xlarge", count = 2 },
  ]
}

# A configured value always wins; only the unset ones follow r.
#   8 of the 16 Trainium chips of an ml.trn1.32xlarge: r = 0.5, vcpu = 64, efa = ceil(0.5) x 8 = 8,
#   memory_in_gib = 384 as configured (r would give 256).
resource "hyperpod_compute_quota" "trainium" {
  name              = "guide-trainium"
  team              = "guide-trainium"
  fair_share_weight = 1

  resources = [
    { instance_type = "ml.trn1.32xlarge", accelerators = 8, memory_in_gib = 384 },
  ]
}

# The same numbers without a quota, e.g. for a check or an output (Terraform 1.8 and later):
# { accelerators = 4, vcpu = 96, memory_in_gib = 1024, efa = 32, accelerator_partition = null }
output "half_a_p5" {
  value = provider::hyperpod::quota_defaults("ml.p5.48xlarge", { accelerators = 4 })
}
