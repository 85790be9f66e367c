package quota

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// Comparison of what the provider writes with what the cluster holds. Each function lists the
// differences in words a plan reviewer can act on; no difference means equal.

// SpecDrift lists each field of got (read from the cluster) that differs from want (rendered)
// in a field the provider manages (everything RenderClusterQueue sets). Quantities compare by
// value (48 == 48000m, 192Gi == 196608Mi), a nil stopPolicy is None, nil preemption policies
// are Never, a nil fairSharing or weight is Kueue's default weight 1, nil and empty label maps
// are equal. The order of resourceGroups, coveredResources, flavors and their resources is
// significant, as Kueue requires. Fields the provider does not manage are not part of
// kueue.ClusterQueueSpec at all.
func SpecDrift(want, got kueue.ClusterQueueSpec) []string {
	var out []string
	if want.CohortName != got.CohortName {
		out = append(out, fmt.Sprintf("spec.cohortName is %q, want %q", got.CohortName, want.CohortName))
	}
	if !selectorEqual(want.NamespaceSelector, got.NamespaceSelector) {
		out = append(out, fmt.Sprintf("spec.namespaceSelector is %s, want %s", selectorText(got.NamespaceSelector), selectorText(want.NamespaceSelector)))
	}
	if w, g := effectiveStopPolicy(want.StopPolicy), effectiveStopPolicy(got.StopPolicy); w != g {
		out = append(out, fmt.Sprintf("spec.stopPolicy is %s, want %s", g, w))
	}
	if w, g := effectivePreemption(want.Preemption), effectivePreemption(got.Preemption); w != g {
		out = append(out, fmt.Sprintf("spec.preemption is reclaimWithinCohort %s, borrowWithinCohort %s, withinClusterQueue %s; want %s, %s, %s",
			g[0], g[1], g[2], w[0], w[1], w[2]))
	}
	if ww, gw := effectiveWeight(want.FairSharing), effectiveWeight(got.FairSharing); ww.Cmp(gw) != 0 {
		out = append(out, fmt.Sprintf("spec.fairSharing.weight is %s, want %s", gw.String(), ww.String()))
	}
	if len(want.ResourceGroups) != len(got.ResourceGroups) {
		out = append(out, fmt.Sprintf("spec.resourceGroups has %d groups, want %d", len(got.ResourceGroups), len(want.ResourceGroups)))
		return out
	}
	for i, wg := range want.ResourceGroups {
		gg := got.ResourceGroups[i]
		at := fmt.Sprintf("spec.resourceGroups[%d]", i)
		if !slices.Equal(wg.CoveredResources, gg.CoveredResources) {
			out = append(out, fmt.Sprintf("%s.coveredResources is %v, want %v", at, gg.CoveredResources, wg.CoveredResources))
			continue
		}
		if len(wg.Flavors) != len(gg.Flavors) {
			out = append(out, fmt.Sprintf("%s has %d flavors, want %d", at, len(gg.Flavors), len(wg.Flavors)))
			continue
		}
		for j, wf := range wg.Flavors {
			gf := gg.Flavors[j]
			if wf.Name != gf.Name || len(wf.Resources) != len(gf.Resources) {
				out = append(out, fmt.Sprintf("%s.flavors[%d] is %q with %d resources, want %q with %d", at, j, gf.Name, len(gf.Resources), wf.Name, len(wf.Resources)))
				continue
			}
			for k, wr := range wf.Resources {
				gr := gf.Resources[k]
				switch {
				case wr.Name != gr.Name:
					out = append(out, fmt.Sprintf("flavor %q resource %d is %q, want %q", wf.Name, k, gr.Name, wr.Name))
				case wr.NominalQuota.Cmp(gr.NominalQuota) != 0 || !quantityPtrEqual(wr.BorrowingLimit, gr.BorrowingLimit) ||
					!quantityPtrEqual(wr.LendingLimit, gr.LendingLimit):
					out = append(out, fmt.Sprintf("flavor %q %s quota differs from the configuration", wf.Name, wr.Name))
				}
			}
		}
	}
	return out
}

// MetadataDrift lists each label and annotation of want that got lacks or holds with another
// value. Other labels and annotations (other managers', Kueue's) are ignored; the provider
// always writes each key it owns (the description annotation too, empty when there is none),
// so a key it stops writing is removed by server-side apply rather than left behind.
func MetadataDrift(want, got metav1.ObjectMeta) []string {
	var out []string
	diff := func(kind string, want, got map[string]string) {
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			g, ok := got[k]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s %s is missing", kind, k))
			case g != want[k]:
				out = append(out, fmt.Sprintf("%s %s was changed outside Terraform", kind, k))
			}
		}
	}
	diff("label", want.Labels, got.Labels)
	diff("annotation", want.Annotations, got.Annotations)
	return out
}

func selectorText(s *metav1.LabelSelector) string {
	if s == nil {
		return "unset"
	}
	return metav1.FormatLabelSelector(s)
}

func quantityPtrEqual(a, b *resource.Quantity) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Cmp(*b) == 0
}

func effectiveStopPolicy(p *string) string {
	if p == nil || *p == "" {
		return kueue.StopPolicyNone
	}
	return *p
}

func orNever(s string) string {
	if s == "" {
		return kueue.PreemptionNever
	}
	return s
}

func effectivePreemption(p *kueue.ClusterQueuePreemption) [3]string {
	if p == nil {
		return [3]string{kueue.PreemptionNever, kueue.PreemptionNever, kueue.PreemptionNever}
	}
	borrow := ""
	if p.BorrowWithinCohort != nil {
		borrow = p.BorrowWithinCohort.Policy
	}
	return [3]string{orNever(p.ReclaimWithinCohort), orNever(borrow), orNever(p.WithinClusterQueue)}
}

func effectiveWeight(f *kueue.FairSharing) resource.Quantity {
	if f == nil || f.Weight == nil {
		return *resource.NewQuantity(1, resource.DecimalSI)
	}
	return *f.Weight
}

// selectorEqual compares label selectors; nil (no namespace) differs from {} (every namespace).
func selectorEqual(a, b *metav1.LabelSelector) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if !maps.Equal(a.MatchLabels, b.MatchLabels) || len(a.MatchExpressions) != len(b.MatchExpressions) {
		return false
	}
	for i, ea := range a.MatchExpressions {
		eb := b.MatchExpressions[i]
		if ea.Key != eb.Key || ea.Operator != eb.Operator || !slices.Equal(ea.Values, eb.Values) {
			return false
		}
	}
	return true
}
