# The cluster's compute quotas, as the console made them: name, id, team and status. The import
# ID of a quota is its team or its id.
hyperpod_cluster_arn=arn:aws:sagemaker:us-west-2:111122223333:cluster/abcd1234efgh

aws sagemaker list-compute-quotas --cluster-arn "$hyperpod_cluster_arn" \
  --query 'ComputeQuotaSummaries[].{name: Name, id: ComputeQuotaId, team: ComputeQuotaTarget.TeamName, status: Status}' \
  --output table
