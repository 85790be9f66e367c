# The ml-research team's namespace hyperpod-ns-ml-research, labelled like the namespaces
# SageMaker HyperPod task governance creates, with the LocalQueue
# hyperpod-ns-ml-research-localqueue that feeds the team's ClusterQueue (on a cluster with the
# task-governance add-on, the add-on creates that LocalQueue with the team's compute quota).
resource "hyperpod_team_namespace" "ml_research" {
  team = "ml-research"

  labels = {
    "example.com/cost-center"            = "cc-4711"
    "pod-security.kubernetes.io/enforce" = "baseline"
  }

  annotations = {
    "example.com/contact" = "ml-research-oncall@example.com"
  }

  timeouts {
    delete = "20m" # destroy waits until the namespace and everything in it are gone
  }
}

# The quota of the same team manages the ClusterQueue the LocalQueue feeds
# (cluster_queue_name). Taking the team from the namespace makes Terraform create the
# namespace first and destroy it last:
#
#   resource "hyperpod_compute_quota" "ml_research" {
#     name      = "ml-research"
#     team      = hyperpod_team_namespace.ml_research.team
#     resources = [{ instance_type = "ml.p5.48xlarge", accelerators = 8 }]
#   }

# Jobs of the team run in the namespace and name the LocalQueue in their labels:
#   metadata:
#     namespace: hyperpod-ns-ml-research
#     labels:
#       kueue.x-k8s.io/queue-name: hyperpod-ns-ml-research-localqueue
output "ml_research_job_labels" {
  value = {
    "kueue.x-k8s.io/queue-name" = hyperpod_team_namespace.ml_research.local_queue_name
  }
}

# A scratch team whose namespace may be destroyed with whatever still runs in it.
resource "hyperpod_team_namespace" "sandbox" {
  team          = "sandbox"
  force_destroy = true
}
