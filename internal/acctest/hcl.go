package acctest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// QuotaBuilder builds the HCL of a hyperpod_compute_quota "test" named after its team:
//
//	acctest.Quota("ml").Resource("ml.g5.12xlarge").Count(2).HCL()
type QuotaBuilder struct {
	team    string
	entries []string
	body    []string
}

// Quota starts a hyperpod_compute_quota "test" of team, named "<team>-quota".
func Quota(team string) *QuotaBuilder { return &QuotaBuilder{team: team} }

// Resource adds a resources entry for instanceType; the amount setters that follow fill it.
func (b *QuotaBuilder) Resource(instanceType string) *QuotaBuilder {
	b.entries = append(b.entries, fmt.Sprintf("instance_type = %q", instanceType))
	return b
}

func (b *QuotaBuilder) set(attr, value string) *QuotaBuilder {
	if len(b.entries) == 0 {
		panic("acctest: " + attr + " before Resource")
	}
	b.entries[len(b.entries)-1] += ", " + attr + " = " + value
	return b
}

// Count sets the count of instances of the last entry.
func (b *QuotaBuilder) Count(n int) *QuotaBuilder { return b.set("count", strconv.Itoa(n)) }

// Accelerators sets the accelerators of the last entry.
func (b *QuotaBuilder) Accelerators(n int) *QuotaBuilder {
	return b.set("accelerators", strconv.Itoa(n))
}

// VCPU sets the vcpu of the last entry.
func (b *QuotaBuilder) VCPU(v float64) *QuotaBuilder {
	return b.set("vcpu", strconv.FormatFloat(v, 'f', -1, 64))
}

// Body adds HCL lines inside the resource block, after the resources list, as written.
func (b *QuotaBuilder) Body(lines string) *QuotaBuilder {
	b.body = append(b.body, lines)
	return b
}

// HCL is the resource block.
func (b *QuotaBuilder) HCL() string {
	var lines []string
	if len(b.entries) > 0 {
		lines = append(lines, "  resources = [{ "+strings.Join(b.entries, " }, { ")+" }]")
	}
	lines = append(lines, b.body...)
	return fmt.Sprintf(`
resource "hyperpod_compute_quota" "test" {
  name = "%s-quota"
  team = %q
%s
}
`, b.team, b.team, strings.Join(lines, "\n"))
}

// TeamNamespaceBuilder builds the HCL of a hyperpod_team_namespace "test":
//
//	acctest.TeamNamespace("ml").ForceDestroy().HCL()
type TeamNamespaceBuilder struct {
	team string
	body []string
}

// TeamNamespace starts a hyperpod_team_namespace "test" of team.
func TeamNamespace(team string) *TeamNamespaceBuilder { return &TeamNamespaceBuilder{team: team} }

// ForceDestroy sets force_destroy = true.
func (b *TeamNamespaceBuilder) ForceDestroy() *TeamNamespaceBuilder {
	return b.Body("  force_destroy = true")
}

// Body adds HCL lines inside the resource block, as written.
func (b *TeamNamespaceBuilder) Body(lines string) *TeamNamespaceBuilder {
	b.body = append(b.body, lines)
	return b
}

// HCL is the resource block.
func (b *TeamNamespaceBuilder) HCL() string {
	return fmt.Sprintf(`
resource "hyperpod_team_namespace" "test" {
  team = %q
%s
}
`, b.team, strings.Join(b.body, "\n"))
}

// SchedulerConfigBuilder builds the HCL of a hyperpod_cluster_scheduler_config "test".
type SchedulerConfigBuilder struct {
	classes []quota.PriorityClass
}

// SchedulerConfig starts a hyperpod_cluster_scheduler_config "test" with the given priority
// classes, in order.
func SchedulerConfig(classes ...quota.PriorityClass) *SchedulerConfigBuilder {
	return &SchedulerConfigBuilder{classes: classes}
}

// Class adds a priority class.
func (b *SchedulerConfigBuilder) Class(name string, weight int64) *SchedulerConfigBuilder {
	b.classes = append(b.classes, quota.PriorityClass{Name: name, Weight: weight})
	return b
}

// HCL is the resource block.
func (b *SchedulerConfigBuilder) HCL() string {
	var classes strings.Builder
	for _, c := range b.classes {
		fmt.Fprintf(&classes, "    { name = %q, weight = %d },\n", c.Name, c.Weight)
	}
	return fmt.Sprintf(`
resource "hyperpod_cluster_scheduler_config" "test" {
  priority_classes = [
%s  ]
}
`, classes.String())
}

// ProviderHost is a provider "hyperpod" block with only host set, for a proxy that holds
// the credentials.
func ProviderHost(url string) string {
	return fmt.Sprintf(`
provider "hyperpod" {
  host = %q
}
`, url)
}
