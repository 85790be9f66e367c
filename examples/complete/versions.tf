terraform {
  required_version = ">= 1.11"
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

# Connection settings come from the KUBE_* environment variables, e.g. KUBE_CONFIG_PATH (set by
# `make demo`; `make cluster-up` prints it for the local control plane).
provider "hyperpod" {}
