package quota

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

func renderedQueue(t *testing.T) kueue.ClusterQueue {
	t.Helper()
	rc, problems := Plan(catalog.Builtin(), Config{Name: "q", Team: "a", Resources: []Entry{{InstanceType: "ml.g5.12xlarge", Count: ptr(int64(1))}}})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	cq, err := RenderClusterQueue(catalog.Builtin(), rc)
	if err != nil {
		t.Fatal(err)
	}
	return cq
}

func TestSpecDrift(t *testing.T) {
	never, hold := kueue.PreemptionNever, kueue.StopPolicyHold
	for _, tc := range []struct {
		name string
		edit func(*kueue.ClusterQueueSpec)
		want []string
	}{
		{"equal", func(*kueue.ClusterQueueSpec) {}, nil},
		{"cohort", func(s *kueue.ClusterQueueSpec) { s.CohortName = "x" }, []string{`spec.cohortName is "x", want "hyperpod-cohort"`}},
		{"selector", func(s *kueue.ClusterQueueSpec) { s.NamespaceSelector = nil },
			[]string{"spec.namespaceSelector is unset, want sagemaker.amazonaws.com/quota-allocation-id=a"}},
		{"stop policy", func(s *kueue.ClusterQueueSpec) { s.StopPolicy = &hold }, []string{"spec.stopPolicy is Hold, want None"}},
		{"preemption", func(s *kueue.ClusterQueueSpec) { s.Preemption.ReclaimWithinCohort = never },
			[]string{"spec.preemption is reclaimWithinCohort Never, borrowWithinCohort Never, withinClusterQueue LowerPriority; want Any, Never, LowerPriority"}},
		{"fair sharing", func(s *kueue.ClusterQueueSpec) { s.FairSharing.Weight = resource.NewQuantity(3, resource.DecimalSI) },
			[]string{"spec.fairSharing.weight is 3, want 0"}},
		{"extra group", func(s *kueue.ClusterQueueSpec) { s.ResourceGroups = append(s.ResourceGroups, kueue.ResourceGroup{}) },
			[]string{"spec.resourceGroups has 2 groups, want 1"}},
		{"nominal quota", func(s *kueue.ClusterQueueSpec) {
			s.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse("1")
		}, []string{`flavor "ml.g5.12xlarge" cpu quota differs from the configuration`}},
	} {
		want := renderedQueue(t)
		got := renderedQueue(t)
		tc.edit(&got.Spec)
		d := SpecDrift(want.Spec, got.Spec)
		if !reflect.DeepEqual(d, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, d, tc.want)
		}
	}
}

func TestMetadataDrift(t *testing.T) {
	want := metav1.ObjectMeta{Labels: map[string]string{"a": "1", "b": "2"}, Annotations: map[string]string{"n": "x"}}
	got := metav1.ObjectMeta{Labels: map[string]string{"a": "9", "other": "kept"}, Annotations: map[string]string{"n": "x", "foreign": "y"}}
	if d := MetadataDrift(want, got); !reflect.DeepEqual(d, []string{"label a was changed outside Terraform", "label b is missing"}) {
		t.Errorf("drift %q", d)
	}
	if d := MetadataDrift(want, want); d != nil {
		t.Errorf("equal metadata: %q", d)
	}
}

func TestSpecDriftCanonicalQuantities(t *testing.T) {
	cat := catalog.Builtin()
	c := base(g512(1))
	c.Sharing.Strategy = str(StrategyDontLend)
	_, cq := mustRender(t, cat, c)
	want := cq.Spec

	got := throughAPIServer(t, cq).Spec
	res := got.ResourceGroups[0].Flavors[0].Resources
	res[0].NominalQuota = mustQ("48000m")
	res[1].NominalQuota = mustQ("196608Mi")
	res[2].NominalQuota = mustQ("4000m")
	res[1].BorrowingLimit = ptr(mustQ("0Gi"))
	res[1].LendingLimit = ptr(mustQ("0m"))
	got.FairSharing.Weight = ptr(mustQ("0.0"))
	if !specEqual(want, got) {
		t.Fatal("canonical spellings compare unequal")
	}

	// API-server defaults are not drift.
	d := throughAPIServer(t, cq).Spec
	d.StopPolicy = nil
	if !specEqual(want, d) {
		t.Fatal("nil stopPolicy != None")
	}
	never := kueue.ClusterQueueSpec{}
	explicit := kueue.ClusterQueueSpec{StopPolicy: ptr("None"), FairSharing: &kueue.FairSharing{Weight: ptr(mustQ("1"))},
		Preemption: &kueue.ClusterQueuePreemption{ReclaimWithinCohort: "Never", BorrowWithinCohort: &kueue.BorrowWithinCohort{Policy: "Never"}, WithinClusterQueue: "Never"}}
	if !specEqual(explicit, never) || !specEqual(never, explicit) {
		t.Fatal("Kueue defaults compare unequal")
	}
	if !specEqual(kueue.ClusterQueueSpec{NamespaceSelector: &metav1.LabelSelector{}},
		kueue.ClusterQueueSpec{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{}}}) {
		t.Fatal("nil and empty matchLabels differ")
	}
}

func TestSpecDriftDetectsChanges(t *testing.T) {
	cat := catalog.Builtin()
	c := base(g512(1), Entry{InstanceType: "ml.c5.xlarge", Count: i64(1)})
	_, cq := mustRender(t, cat, c)
	want := cq.Spec
	tests := map[string]func(s *kueue.ClusterQueueSpec){
		"nominal": func(s *kueue.ClusterQueueSpec) { s.ResourceGroups[0].Flavors[0].Resources[2].NominalQuota = mustQ("5") },
		"borrowingLimit": func(s *kueue.ClusterQueueSpec) {
			s.ResourceGroups[0].Flavors[0].Resources[0].BorrowingLimit = ptr(mustQ("25"))
		},
		"borrowingLimit unset": func(s *kueue.ClusterQueueSpec) { s.ResourceGroups[0].Flavors[0].Resources[0].BorrowingLimit = nil },
		"lendingLimit set": func(s *kueue.ClusterQueueSpec) {
			s.ResourceGroups[0].Flavors[0].Resources[0].LendingLimit = ptr(mustQ("0"))
		},
		"cohort":              func(s *kueue.ClusterQueueSpec) { s.CohortName = "other" },
		"no cohort":           func(s *kueue.ClusterQueueSpec) { s.CohortName = "" },
		"stopPolicy":          func(s *kueue.ClusterQueueSpec) { s.StopPolicy = ptr("Hold") },
		"stopPolicy drain":    func(s *kueue.ClusterQueueSpec) { s.StopPolicy = ptr("HoldAndDrain") },
		"weight":              func(s *kueue.ClusterQueueSpec) { s.FairSharing.Weight = ptr(mustQ("1")) },
		"weight removed":      func(s *kueue.ClusterQueueSpec) { s.FairSharing = nil },
		"within":              func(s *kueue.ClusterQueueSpec) { s.Preemption.WithinClusterQueue = "Never" },
		"reclaim":             func(s *kueue.ClusterQueueSpec) { s.Preemption.ReclaimWithinCohort = "LowerPriority" },
		"borrowWithinCohort":  func(s *kueue.ClusterQueueSpec) { s.Preemption.BorrowWithinCohort.Policy = "LowerPriority" },
		"preemption removed":  func(s *kueue.ClusterQueueSpec) { s.Preemption = nil },
		"selector":            func(s *kueue.ClusterQueueSpec) { s.NamespaceSelector.MatchLabels["x"] = "y" },
		"selector everything": func(s *kueue.ClusterQueueSpec) { s.NamespaceSelector = &metav1.LabelSelector{} },
		"selector nothing":    func(s *kueue.ClusterQueueSpec) { s.NamespaceSelector = nil },
		"selector expression": func(s *kueue.ClusterQueueSpec) {
			s.NamespaceSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Exists"}}
		},
		"flavor order": func(s *kueue.ClusterQueueSpec) {
			f := s.ResourceGroups[0].Flavors
			f[0], f[1] = f[1], f[0]
		},
		"covered order": func(s *kueue.ClusterQueueSpec) {
			r := s.ResourceGroups[0].CoveredResources
			r[0], r[1] = r[1], r[0]
		},
		"resource order": func(s *kueue.ClusterQueueSpec) {
			r := s.ResourceGroups[0].Flavors[0].Resources
			r[0], r[1] = r[1], r[0]
		},
		"flavor renamed": func(s *kueue.ClusterQueueSpec) { s.ResourceGroups[0].Flavors[0].Name = "x" },
		"flavor removed": func(s *kueue.ClusterQueueSpec) { s.ResourceGroups[0].Flavors = s.ResourceGroups[0].Flavors[:1] },
		"resource gone": func(s *kueue.ClusterQueueSpec) {
			s.ResourceGroups[0].Flavors[0].Resources = s.ResourceGroups[0].Flavors[0].Resources[:4]
		},
		"group added": func(s *kueue.ClusterQueueSpec) { s.ResourceGroups = append(s.ResourceGroups, kueue.ResourceGroup{}) },
		"resource rename": func(s *kueue.ClusterQueueSpec) {
			s.ResourceGroups[0].Flavors[0].Resources[3].Name = "aws.amazon.com/neuron"
		},
	}
	for name, mut := range tests {
		got := throughAPIServer(t, cq).Spec
		mut(&got)
		if specEqual(want, got) || specEqual(got, want) {
			t.Errorf("%s: change not detected", name)
		}
	}
}

func TestMetadataDriftManagedKeys(t *testing.T) {
	_, cq := mustRender(t, catalog.Builtin(), base(g512(1)))
	want := cq.ObjectMeta
	got := throughAPIServer(t, cq).ObjectMeta
	got.Labels["team.example.com/owner"] = "someone"
	got.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
	got.Finalizers = []string{"kueue.x-k8s.io/resource-in-use"}
	got.ResourceVersion, got.UID = "12", "abc"
	if !managedMetadataEqual(want, got) {
		t.Fatal("other managers' metadata counted as drift")
	}
	for name, mut := range map[string]func(m *metav1.ObjectMeta){
		"managed-by removed":  func(m *metav1.ObjectMeta) { delete(m.Labels, LabelManagedBy) },
		"team label changed":  func(m *metav1.ObjectMeta) { m.Labels[LabelQuotaAllocationID] = "other" },
		"name annotation":     func(m *metav1.ObjectMeta) { m.Annotations[AnnotationName] = "other" },
		"description removed": func(m *metav1.ObjectMeta) { delete(m.Annotations, AnnotationDescription) },
		"config changed":      func(m *metav1.ObjectMeta) { m.Annotations[AnnotationConfiguration] = "{}" },
	} {
		g := throughAPIServer(t, cq).ObjectMeta
		mut(&g)
		if managedMetadataEqual(want, g) {
			t.Errorf("%s: not detected", name)
		}
	}
}
