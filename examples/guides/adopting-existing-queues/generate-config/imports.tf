# Import blocks without resource blocks: terraform plan -generate-config-out=generated.tf
# writes the resource blocks from what the cluster holds. (Configuration generation does not
# support import blocks with for_each: one block per object.)

terraform {
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

import {
  to = hyperpod_team_namespace.research
  id = "guide-research"
}

import {
  to = hyperpod_compute_quota.research
  id = "guide-research"
}
