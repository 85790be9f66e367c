# Build the provider from a clone of the repository (Go 1.26) and install it into Terraform's
# implied local mirror directory, ~/.terraform.d/plugins/ (and OpenTofu's), as the version at
# the top of CHANGELOG.md.
git clone https://github.com/quotaworks/terraform-provider-hyperpod
cd terraform-provider-hyperpod
make install

# After every rebuild, a configuration's lock file no longer matches the binary: in the
# configuration's directory, remove the lock file (or just its quotaworks/hyperpod entry) and
# run terraform init again.
cd /path/to/your/configuration
rm -f .terraform.lock.hcl && terraform init

# Later, to install the provider from the registry instead (terraform init never asks the
# registry for a provider it finds in the local mirror), run in the clone:
#   make uninstall
# then remove the configuration's lock file and run terraform init again.
