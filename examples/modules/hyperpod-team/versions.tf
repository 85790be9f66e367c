terraform {
  required_version = ">= 1.11"
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = ">= 0.1"
    }
  }
}
