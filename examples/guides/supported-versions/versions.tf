terraform {
  # Provider functions (provider::hyperpod::...) need Terraform 1.8; everything else in this
  # provider works with 1.11, the oldest supported version.
  required_version = ">= 1.11"

  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}
