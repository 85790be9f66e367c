# Build the provider from a clone of the repository (Go 1.26).
git clone https://github.com/quotaworks/terraform-provider-hyperpod
cd terraform-provider-hyperpod

# Either: go install, into $(go env GOBIN) or $(go env GOPATH)/bin, for dev_overrides.
make install # = go install .

# Or: an implied local mirror directory, which terraform init uses without any CLI
# configuration (as long as yours has no provider_installation block). The version in the
# path is the one Terraform sees; pick a release-style version that meets your configuration's
# constraint (~> 0.1 in the examples): init never picks pre-releases from a mirror. OpenTofu
# looks under registry.opentofu.org/ instead.
version=0.1.0
platform="$(go env GOOS)_$(go env GOARCH)"
mirror="$HOME/.terraform.d/plugins/registry.terraform.io/quotaworks/hyperpod/$version/$platform"
mkdir -p "$mirror"
go build -o "$mirror/terraform-provider-hyperpod_v$version" .

# After every rebuild, a configuration's lock file no longer matches the binary: in the
# configuration's directory, remove the lock file (or just its quotaworks/hyperpod entry) and
# run terraform init again.
cd /path/to/your/configuration
rm -f .terraform.lock.hcl && terraform init
