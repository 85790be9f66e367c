package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// unreachableProvider points at a port nothing listens on; any API call would fail.
const unreachableProvider = `
provider "hyperpod" {
  host  = "https://127.0.0.1:1"
  token = "not-a-real-token"

  retry {
    max_attempts = 2
    min_backoff  = "10ms"
    max_backoff  = "50ms"
  }
}
`

// Configuring the provider does not connect: a configuration that needs no cluster data plans
// and applies while the API server is unreachable.
func TestAccProvider_unreachableHostConfigures(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: unreachableProvider + `
resource "terraform_data" "noop" {
  input = "planned without the cluster"
}
`,
		}},
	})
}

// Instance types are checked against the catalog before any API call, so a typo is reported as
// such even when the cluster cannot be reached.
func TestAccProvider_unreachableHostUnknownType(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      unreachableProvider + capacityConfig("ml.g5.13xlarge"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Unknown instance type.*Did you mean\s+"ml\.g5\.12xlarge"`),
		}},
	})
}

// The same data source with a known type does call the API, and the error says so.
func TestAccProvider_unreachableHostReadFails(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      unreachableProvider + capacityConfig("ml.g5.12xlarge"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`Cannot list Nodes`),
		}},
	})
}
