# Step 5, from the add-on to your own Kueue: the compute quotas and the cluster scheduler config
# that step 1 left in the SageMaker API. Deleted, they no longer show in the console, and an
# add-on installed again later does not turn them back into queues.
cluster_arn=$(aws sagemaker describe-cluster --cluster-name my-hyperpod-cluster \
  --query ClusterArn --output text)

for id in $(aws sagemaker list-compute-quotas --cluster-arn "$cluster_arn" \
  --query 'ComputeQuotaSummaries[].ComputeQuotaId' --output text); do
  aws sagemaker delete-compute-quota --compute-quota-id "$id"
done
for id in $(aws sagemaker list-cluster-scheduler-configs --cluster-arn "$cluster_arn" \
  --query 'ClusterSchedulerConfigSummaries[].ClusterSchedulerConfigId' --output text); do
  aws sagemaker delete-cluster-scheduler-config --cluster-scheduler-config-id "$id"
done

# AWS does not document how the API treats them once the add-on is gone: check that they reach
# Deleted rather than a *Failed status.
aws sagemaker list-compute-quotas --cluster-arn "$cluster_arn" --query 'ComputeQuotaSummaries[].[Name,Status]'
aws sagemaker list-cluster-scheduler-configs --cluster-arn "$cluster_arn" --query 'ClusterSchedulerConfigSummaries[].[Name,Status]'
