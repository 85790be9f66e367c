#!/usr/bin/env bash
# Give an IAM role (the one Terraform runs as) exactly the Kubernetes permissions of
# task-governance-clusterrole.yaml on the EKS cluster of a HyperPod cluster with the
# task-governance add-on: apply the ClusterRole and its binding to the Kubernetes group
# "hyperpod-provider-task-governance", then map the role to that group with an access entry.
# No EKS access policy is associated: RBAC grants everything the provider needs over
# Kubernetes. Its SageMaker permissions are IAM's: ../iam/task-governance-policy.json.
#
#   CLUSTER=my-hyperpod-eks ROLE_ARN=arn:aws:iam::111122223333:role/terraform ./task-governance-eks-access-entry.sh
#
# The cluster's authentication mode must include API (API or API_AND_CONFIG_MAP).
set -euo pipefail
: "${CLUSTER:?set CLUSTER to the EKS cluster name}"
: "${ROLE_ARN:?set ROLE_ARN to the IAM role the provider authenticates as}"
here="$(cd "$(dirname "$0")" && pwd)"
group=hyperpod-provider-task-governance

kubectl apply -f "$here/task-governance-clusterrole.yaml"

aws eks create-access-entry \
	--cluster-name "$CLUSTER" \
	--principal-arn "$ROLE_ARN" \
	--type STANDARD \
	--kubernetes-groups "$group"
# For an existing entry: aws eks update-access-entry ... --kubernetes-groups "$group"
# (and aws eks disassociate-access-policy for a quick-start AmazonEKSClusterAdminPolicy).

# What the group may do, checked by impersonating a member:
kubectl auth can-i create namespaces --as=terraform --as-group="$group"                        # yes
kubectl auth can-i get clusterqueues.kueue.x-k8s.io --as=terraform --as-group="$group"         # yes
# The admission preview's reads: every ClusterQueue, and the manager's Deployment but no other.
kubectl auth can-i list clusterqueues.kueue.x-k8s.io --as=terraform --as-group="$group"        # yes
kubectl auth can-i get deployments.apps/kueue-controller-manager -n kueue-system --as=terraform --as-group="$group" # yes
kubectl auth can-i get deployments.apps -n kube-system --as=terraform --as-group="$group" || true # no
kubectl auth can-i patch clusterqueues.kueue.x-k8s.io --as=terraform --as-group="$group" || true # no: the add-on's
