#!/usr/bin/env bash
# Give an IAM role (the one Terraform runs as) exactly the permissions of clusterrole.yaml on
# an EKS cluster: apply the ClusterRole and its binding to the Kubernetes group
# "hyperpod-provider", then map the role to that group with an access entry. No EKS access
# policy is associated: RBAC grants everything the provider needs (and discovery, which it
# rarely uses, is open to every authenticated user through system:discovery).
#
#   CLUSTER=my-hyperpod-eks ROLE_ARN=arn:aws:iam::111122223333:role/terraform ./eks-access-entry.sh
#
# The cluster's authentication mode must include API (API or API_AND_CONFIG_MAP).
set -euo pipefail
: "${CLUSTER:?set CLUSTER to the EKS cluster name}"
: "${ROLE_ARN:?set ROLE_ARN to the IAM role the provider authenticates as}"
here="$(cd "$(dirname "$0")" && pwd)"

kubectl apply -f "$here/clusterrole.yaml"

aws eks create-access-entry \
	--cluster-name "$CLUSTER" \
	--principal-arn "$ROLE_ARN" \
	--type STANDARD \
	--kubernetes-groups hyperpod-provider
# For an existing entry: aws eks update-access-entry ... --kubernetes-groups hyperpod-provider
# (and aws eks disassociate-access-policy for a quick-start AmazonEKSClusterAdminPolicy).

# What the group may do, checked by impersonating a member:
kubectl auth can-i patch clusterqueues.kueue.x-k8s.io --as=terraform --as-group=hyperpod-provider # yes
kubectl auth can-i delete namespaces --as=terraform --as-group=hyperpod-provider                  # yes
# The admission preview's reads: the manager's Deployment, and no other.
kubectl auth can-i get deployments.apps/kueue-controller-manager -n kueue-system --as=terraform --as-group=hyperpod-provider # yes
kubectl auth can-i get deployments.apps -n kube-system --as=terraform --as-group=hyperpod-provider || true # no
kubectl auth can-i create deployments --all-namespaces --as=terraform --as-group=hyperpod-provider || true # no
