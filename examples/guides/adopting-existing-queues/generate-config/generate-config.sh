# Writes generated.tf with a resource block for each import block that has none, with the
# values read from the cluster: for a queue another tool wrote, explicit accelerators, vcpu,
# memory_in_gib and efa per instance type, and name = the team.
terraform plan -generate-config-out=generated.tf

# Review it (you may replace the explicit amounts with count = 1 where they are a whole
# instance, for example), then apply: the apply records this provider as the owner.
terraform apply

terraform plan # No changes.
