# HyperPod's cluster policy priorities: each class becomes the Kueue WorkloadPriorityClass
# <name>-priority, which jobs select with the label kueue.x-k8s.io/priority-class.
resource "hyperpod_cluster_scheduler_config" "example" {
  priority_classes = [
    { name = "inference", weight = 100 },      # inference-priority: admitted first
    { name = "training", weight = 75 },        # training-priority
    { name = "experimentation", weight = 25 }, # experimentation-priority: preempted first
  ]
}

# A job asks for a class by label, next to its team's queue:
#   metadata:
#     labels:
#       kueue.x-k8s.io/queue-name: hyperpod-ns-ml-research-localqueue
#       kueue.x-k8s.io/priority-class: training-priority
output "training_priority_class" {
  value = hyperpod_cluster_scheduler_config.example.priority_classes[1].priority_class_name
}
