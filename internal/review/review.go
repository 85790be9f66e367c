// Package review reports what a whole saved plan's compute quota changes do: to the jobs of the
// cluster, as the admission simulator predicts them together, and to capacity, as the planned
// nominal quotas compare with the healthy, schedulable nodes of each instance type. Kueue does
// not know node capacity, so a quota that no node can serve admits jobs whose pods then never
// schedule; the report names those. It prints Markdown a CI job can post on a pull request.
// Pure: the caller lists the cluster.
package review

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/capacity"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Role is the read-only ClusterRole that grants every read of a review, and of the plan before it.
const Role = "examples/rbac/plan-review-clusterrole.yaml"

// Change is one compute quota change of a plan, as the quota it leaves.
type Change struct {
	// Address is the resource instance's address in the plan.
	Address string
	Team    string
	// Planned is the quota the change leaves, as planned; nil when it deletes the quota.
	Planned *quota.ResolvedConfig
	// Actions are Terraform's ("create", "update", "delete", ...).
	Actions []string
	// NotPredicted says why the change cannot be predicted; such a change is left out of the
	// prediction and of the capacity check. "" when it can be.
	NotPredicted string
}

// Input is what a report is made of.
type Input struct {
	Changes []Change
	// Now is the cluster's Kueue state; Version says which Kueue the prediction models and how
	// that was found.
	Now     admission.Cluster
	Version string
	// Nodes are the cluster's Nodes by instance type.
	Nodes   map[string][]capacity.Node
	Catalog *catalog.Catalog
	// InstanceTypesUnknown says why the provider's own instance types are not known, so that
	// Catalog is the built-in one alone; "" when they are.
	InstanceTypesUnknown string
	// Refused are the reads the cluster refused and the prediction is made without, as RBAC
	// names them ("get deployments.apps kueue-system/kueue-controller-manager").
	Refused []string
	// Store places a changed quota in the cluster as the plan's store writes it (the
	// task-governance add-on writes the team's LocalQueue with it).
	Store Placement
}

// Placement puts a team's quota, as planned (nil: deleted), into a cluster as a store holds it,
// rendered with the instance types of cat; queue is the ClusterQueue that holds it. The
// backends' placements, which the provider's admission preview places its changes with too.
type Placement interface {
	WithQuota(c admission.Cluster, cat *catalog.Catalog, team string, planned *quota.ResolvedConfig) (_ admission.Cluster, queue string, err error)
}

// Report is the combined effect of a plan's quota changes.
type Report struct {
	Changes              []Change
	Version              string
	InstanceTypesUnknown string
	Refused              []string
	Effect               admission.Outcome
	Capacity             []InstanceTypeCapacity
}

// InstanceTypeCapacity compares, for one instance type, what the quotas claim after the plan
// with what its healthy, schedulable nodes have.
type InstanceTypeCapacity struct {
	InstanceType string
	Summary      capacity.Summary
	// Known is false for a type the catalog does not know: its figures cannot be summed.
	Known bool
	// BuiltinFigures says the figures are the built-in catalog's, which the provider's own
	// instance types, not known here, may override.
	BuiltinFigures bool
}

// Overcommitted reports whether the quotas claim more accelerators, vCPU or memory than the
// schedulable nodes have.
func (c InstanceTypeCapacity) Overcommitted() bool {
	u := c.Summary.UnallocatedSchedulable
	return c.Known && (u.Accelerators < 0 || u.VCPU < 0 || u.MemoryGiB < 0)
}

// Build predicts the plan's combined effect and compares its quotas with capacity. It fails
// for a change the store cannot place (a quota quota.Plan refuses).
func Build(in Input) (Report, error) {
	after := in.Now
	for _, c := range in.Changes {
		if c.NotPredicted != "" {
			continue
		}
		var err error
		if after, _, err = in.Store.WithQuota(after, in.Catalog, c.Team, c.Planned); err != nil {
			return Report{}, fmt.Errorf("%s: %w", c.Address, err)
		}
	}
	r := Report{Changes: in.Changes, Version: in.Version, InstanceTypesUnknown: in.InstanceTypesUnknown,
		Refused: in.Refused, Effect: admission.Effect(in.Now, after)}
	for _, t := range instanceTypes(in.Changes) {
		it, ok := in.Catalog.Lookup(t)
		row := InstanceTypeCapacity{InstanceType: t, Known: ok, BuiltinFigures: ok && in.InstanceTypesUnknown != ""}
		if ok {
			row.Summary = capacity.Summarize(it, in.Nodes[t], capacity.AllocationsOf(live(after.ClusterQueues), t))
		}
		r.Capacity = append(r.Capacity, row)
	}
	return r, nil
}

// live leaves out ClusterQueues being deleted: their quota is no longer claimed.
func live(queues []kueue.ClusterQueue) []kueue.ClusterQueue {
	var out []kueue.ClusterQueue
	for _, q := range queues {
		if q.DeletionTimestamp == nil {
			out = append(out, q)
		}
	}
	return out
}

// instanceTypes are the instance types of the predicted changes' quotas (a flavor each), sorted.
func instanceTypes(changes []Change) []string {
	seen := map[string]bool{}
	for _, c := range changes {
		if c.Planned == nil || c.NotPredicted != "" {
			continue
		}
		for _, r := range c.Planned.Resources {
			seen[r.Configured.InstanceType] = true
		}
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Markdown is the report for a pull request.
func (r Report) Markdown() string {
	var b strings.Builder
	b.WriteString("## HyperPod quota review\n\n")
	if len(r.Changes) == 0 {
		b.WriteString("This plan changes no compute quota.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d compute quota change(s), predicted together on the cluster as it is now (modelled on %s).\n\n",
		len(r.Changes), r.Version)
	if len(r.Refused) > 0 {
		fmt.Fprintf(&b, "**Reads refused**: the cluster refused %s, so the prediction is made without what they tell. "+
			"The ClusterRole of `%s` grants them.\n\n", strings.Join(r.Refused, ", "), Role)
	}
	b.WriteString("| Quota | Team | Change |\n|---|---|---|\n")
	for _, c := range r.Changes {
		what := strings.Join(c.Actions, ", ")
		if c.NotPredicted != "" {
			what += "; **not predicted**: " + c.NotPredicted
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Address, c.Team, what)
	}
	r.writeInstanceTypesUnknown(&b)
	b.WriteString("\n### Jobs\n\n")
	if r.Effect.Empty() {
		b.WriteString("No pending job starts, and no running job is preempted or left over its team's nominal quota.\n")
	} else {
		r.writeJobs(&b)
	}
	b.WriteString("\n### Capacity of healthy, schedulable nodes\n\n")
	r.writeCapacity(&b)
	return b.String()
}

func (r Report) writeJobs(b *strings.Builder) {
	b.WriteString("| ClusterQueue | Workload | Effect |\n|---|---|---|\n")
	for _, t := range r.Effect.Teams {
		for _, a := range t.Admitted {
			how := "starts"
			if a.Borrowing {
				how += ", borrowing from the cohort"
			}
			fmt.Fprintf(b, "| %s | %s | %s on %s |\n", t.ClusterQueue, a.Workload, how, flavorsOf(a.PodSets))
		}
		for _, p := range t.Preempted {
			what := "evicted: " + p.Reason
			if p.ByClusterQueue != "" {
				what = fmt.Sprintf("**preempted** by %s (%s): %s", p.By, p.ByClusterQueue, p.Reason)
			}
			fmt.Fprintf(b, "| %s | %s | %s |\n", t.ClusterQueue, p.Workload, what)
		}
		for _, n := range t.OverNominal {
			used, nominal, over := n.Amounts()
			for i, w := range n.Workloads {
				fmt.Fprintf(b, "| %s | %s | keeps running, now preemptible (%d of %d in the order Kueue would preempt): "+
					"the team uses %s of its nominal %s of %s on %s, %s over |\n",
					t.ClusterQueue, w, i+1, len(n.Workloads), used, nominal, n.Resource, n.Flavor, over)
			}
		}
		for _, u := range t.Undetermined {
			fmt.Fprintf(b, "| %s | %s | cannot be predicted: %s %s |\n", t.ClusterQueue, u.Workload, u.Reason, u.Detail)
		}
	}
	b.WriteString("\nPreemptible jobs keep running: Kueue reclaims them only when another team of the cohort, or a " +
		"higher priority in the team, needs the quota.\n")
}

// writeInstanceTypesUnknown says plainly which figures the report could not take from the plan.
func (r Report) writeInstanceTypesUnknown(b *strings.Builder) {
	if r.InstanceTypesUnknown == "" {
		return
	}
	var builtin []string
	for _, c := range r.Capacity {
		if c.BuiltinFigures {
			builtin = append(builtin, c.InstanceType)
		}
	}
	fmt.Fprintf(b, "\n**The provider's instance types are not in the plan**: %s.", r.InstanceTypesUnknown)
	if len(builtin) > 0 {
		fmt.Fprintf(b, " The figures of %s are the built-in catalog's; an override of them in the provider block is not seen here.",
			strings.Join(builtin, ", "))
	}
	for _, c := range r.Changes {
		if c.NotPredicted != "" {
			b.WriteString(" The jobs are predicted without the changes not predicted above.")
			break
		}
	}
	b.WriteString(" Give `instance_types` constant values for a review with the provider's own figures.\n")
}

func flavorsOf(ps []admission.PodSetFlavors) string {
	var names []string
	for _, p := range ps {
		for _, f := range p.Flavors {
			if !slices.Contains(names, f.Flavor) {
				names = append(names, f.Flavor)
			}
		}
	}
	return cmp.Or(strings.Join(names, ", "), "no flavor")
}

func (r Report) writeCapacity(b *strings.Builder) {
	b.WriteString("| Instance type | Schedulable nodes | Quotas claim | Schedulable nodes have | |\n|---|---:|---|---|---|\n")
	for _, c := range r.Capacity {
		if !c.Known {
			fmt.Fprintf(b, "| %s | | | | not in the catalog: not compared |\n", c.InstanceType)
			continue
		}
		s := c.Summary
		verdict := "fits"
		if c.Overcommitted() {
			verdict = "**over-committed**: jobs Kueue admits beyond the nodes stay pending in the scheduler"
		}
		if c.BuiltinFigures {
			verdict += " (with the built-in catalog's figures)"
		}
		fmt.Fprintf(b, "| %s | %d of %d | %s | %s | %s |\n", c.InstanceType, s.SchedulableNodeCount, s.NodeCount,
			amounts(s.Allocated), amounts(s.Schedulable), verdict)
	}
}

func amounts(a capacity.Amounts) string {
	return fmt.Sprintf("%d accelerators, %g vCPU, %g GiB", a.Accelerators, a.VCPU, a.MemoryGiB)
}
