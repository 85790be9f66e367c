# Terraform 1.14 and later. List what exists, one line per object: its address, its identity
# and what holds it, e.g.
#   list.hyperpod_compute_quota.team   team=ml-research   ml-research: ClusterQueue "hyperpod-ns-ml-research-clusterqueue"
# and a warning for each object the resources cannot hold exactly.
terraform query

# Write a resource block and an import block (by identity) for each result into adopt.tf,
# which must not exist yet.
terraform query -generate-config-out=adopt.tf

# Review adopt.tf (move the blocks into your files, rename them), then apply: it imports the
# objects and records this provider as their owner.
terraform apply

terraform plan # No changes.
