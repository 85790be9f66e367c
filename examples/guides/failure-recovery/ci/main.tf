# A pipeline's provider block: retries that absorb a flaky API server, and a time bound after
# which a request that keeps failing (an outage) fails the run instead of holding it for minutes.
terraform {
  required_version = ">= 1.11"
  required_providers {
    hyperpod = {
      source  = "quotaworks/hyperpod"
      version = "~> 0.1"
    }
  }
}

# Cluster access comes from KUBE_CONFIG_PATH (or host, token and exec, as in the getting-started
# guide); only the retries are set here.
provider "hyperpod" {
  retry {
    max_attempts = 10      # the default; 1 turns retries off
    min_backoff  = "250ms" # default 500ms
    max_backoff  = "5s"    # default 30s; also caps the Retry-After a throttling server asks for
    max_elapsed  = "20s"   # default 2m: eight to ten attempts fit, then the request fails
  }
}

# One small quota: 1 of the 4 GPUs of an ml.g5.12xlarge.
resource "hyperpod_compute_quota" "ci" {
  name              = "guide-ci"
  team              = "guide-ci"
  fair_share_weight = 1

  resources = [
    { instance_type = "ml.g5.12xlarge", accelerators = 1 },
  ]

  timeouts {
    create = "5m"
    delete = "15m" # how long destroy waits for Kueue to release a queue that still has admitted workloads
  }
}
