# The import ID is the class names (without the -priority suffix) joined by commas: this imports
# the WorkloadPriorityClasses inference-priority and training-priority.
terraform import hyperpod_cluster_scheduler_config.example inference,training
