# A helper of the cluster suite: submits one batch/v1 Job to a team's queue with kubectl, waits
# until the team's ClusterQueue counts it admitted, and reads the queue with the provider. Destroy
# deletes the job and its Workload, so that Kueue releases the quota and the quota can go.

terraform {
  required_providers {
    hyperpod = {
      source = "quotaworks/hyperpod"
    }
  }
}

variable "team" {
  type = string
}

variable "namespace" {
  type = string
}

variable "local_queue_name" {
  type = string
}

variable "cluster_queue_name" {
  type = string
}

variable "cpu" {
  description = "vCPU the job requests."
  type        = number
}

variable "memory_in_gib" {
  description = "Memory the job requests, in GiB."
  type        = number
}

locals {
  # The cluster the provider reaches: KUBE_CONFIG_PATH and KUBE_CTX when they are set.
  kubectl = "kubectl $${KUBE_CONFIG_PATH:+--kubeconfig=\"$KUBE_CONFIG_PATH\"} $${KUBE_CTX:+--context=\"$KUBE_CTX\"}"
  job     = "admission-check"
}

resource "terraform_data" "job" {
  input = {
    kubectl   = local.kubectl
    namespace = var.namespace
    job       = local.job
  }

  # Suspended, as Kueue's webhook would make it: Kueue unsuspends it once admitted. Its Pod
  # sleeps, so on a cluster that runs it the job stays admitted while the suite reads the queue.
  provisioner "local-exec" {
    command = <<-EOT
      ${local.kubectl} create -f - <<'YAML'
      apiVersion: batch/v1
      kind: Job
      metadata:
        name: ${local.job}
        namespace: ${var.namespace}
        labels:
          kueue.x-k8s.io/queue-name: ${var.local_queue_name}
      spec:
        suspend: true
        template:
          spec:
            restartPolicy: Never
            containers:
              - name: main
                image: busybox
                command: ["sleep", "3600"]
                resources:
                  requests:
                    cpu: "${var.cpu}"
                    memory: ${var.memory_in_gib}Gi
      YAML
    EOT
  }

  # A cluster without a garbage collector (the provider's local control plane) keeps the
  # Workload of a deleted job: delete it too, and wait until it is gone.
  provisioner "local-exec" {
    when    = destroy
    command = <<-EOT
      set -e
      ${self.input.kubectl} delete job ${self.input.job} -n ${self.input.namespace} --ignore-not-found --wait
      ${self.input.kubectl} delete workloads.kueue.x-k8s.io --all -n ${self.input.namespace} --wait --timeout=60s
    EOT
  }
}

# Kueue writes the ClusterQueue's status a moment after it admits a workload: wait for what the
# data source reads. A resource of its own, so that a job that is never admitted still gets
# deleted (Terraform runs no destroy provisioner of a resource whose create failed).
resource "terraform_data" "admitted" {
  triggers_replace = [terraform_data.job.id]

  provisioner "local-exec" {
    command = <<-EOT
      ${local.kubectl} wait --for=jsonpath='{.status.admittedWorkloads}'=1 clusterqueue/${var.cluster_queue_name} --timeout=60s || {
        echo "Kueue did not admit the job within 60s; its Workload says why:" >&2
        ${local.kubectl} describe workloads.kueue.x-k8s.io -n ${var.namespace} >&2
        exit 1
      }
    EOT
  }
}

data "hyperpod_team_usage" "this" {
  team       = var.team
  depends_on = [terraform_data.admitted]
}

output "usage" {
  description = "The team's queue as Kueue reports it."
  value       = data.hyperpod_team_usage.this
}

output "by_resource" {
  description = "The queue's figures by \"<instance type> <resource>\", e.g. \"ml.m5.4xlarge cpu\"."
  value       = { for r in data.hyperpod_team_usage.this.resources : "${r.instance_type} ${r.resource}" => r }
}
