# Which queues exist, and who wrote them (an empty MANAGED-BY column: not this provider).
kubectl get clusterqueues -L app.kubernetes.io/managed-by,sagemaker.amazonaws.com/quota-allocation-id
kubectl get namespaces -l sagemaker.amazonaws.com/quota-allocation-id -L app.kubernetes.io/managed-by

# Without import blocks: import into the state right away (the ID is the team).
terraform import hyperpod_team_namespace.research guide-research
terraform import hyperpod_compute_quota.research guide-research

# Either way, the first plan shows an update per imported resource: drift goes from
# ["imported: the next apply records this resource's owner_id on the queue"] to [], and
# owner_id is known after apply. Nothing else should change; if something does, adjust the
# configuration to the cluster (or accept the change).
terraform plan
terraform apply

# From now on the objects carry app.kubernetes.io/managed-by: terraform-provider-hyperpod and
# this state's owner_id, and the next plan is empty.
terraform plan # No changes.
