# On a cluster with the task-governance add-on: quotas and the cluster policy go through the
# SageMaker API, which the add-on turns into Kueue objects. They take the HyperPod cluster's ARN.
cluster_arn=$(aws sagemaker describe-cluster --cluster-name my-hyperpod-cluster \
  --query ClusterArn --output text)

# The cluster policy: priority classes (jobs use <name>-priority) and fair share.
aws sagemaker create-cluster-scheduler-config \
  --name cluster-policy \
  --cluster-arn "$cluster_arn" \
  --scheduler-config '{
    "PriorityClasses": [
      {"Name": "inference", "Weight": 100},
      {"Name": "training", "Weight": 75}
    ],
    "FairShare": "Enabled"
  }'

# A team's compute quota: 4 of the 8 H100s of an ml.p5.48xlarge, lending and borrowing.
aws sagemaker create-compute-quota \
  --name research-quota \
  --cluster-arn "$cluster_arn" \
  --compute-quota-target '{"TeamName": "research", "FairShareWeight": 10}' \
  --compute-quota-config '{
    "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 4}],
    "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
    "PreemptTeamTasks": "LowerPriority"
  }' \
  --activation-state Enabled

aws sagemaker list-compute-quotas --cluster-arn "$cluster_arn"
