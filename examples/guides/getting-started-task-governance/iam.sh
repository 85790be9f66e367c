# Create the policy of exactly the SageMaker actions the provider calls, and attach it to the
# IAM role Terraform runs as. Run from a checkout of the provider's repository (or download
# examples/iam/task-governance-policy.json first).
role_name=platform-terraform
account_id=$(aws sts get-caller-identity --query Account --output text)

aws iam create-policy --policy-name hyperpod-task-governance-quotas \
  --policy-document file://examples/iam/task-governance-policy.json

aws iam attach-role-policy --role-name "$role_name" \
  --policy-arn "arn:aws:iam::${account_id}:policy/hyperpod-task-governance-quotas"
