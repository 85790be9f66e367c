package quota

import (
	"fmt"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// SpecDrift lists, in words a plan reviewer can act on, each managed field of got (read from
// the cluster) that differs from want (rendered), with the comparison rules of SpecEqual. It is
// empty exactly when SpecEqual holds.
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
// value; other keys are not the provider's and are ignored (see ManagedMetadataEqual).
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
