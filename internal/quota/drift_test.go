package quota

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

func renderedQueue(t *testing.T) kueue.ClusterQueue {
	t.Helper()
	rc, problems := Defaults(catalog.Builtin(), Config{Name: "q", Team: "a", Resources: []Entry{{InstanceType: "ml.g5.12xlarge", Count: ptr(int64(1))}}})
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
		if (len(d) == 0) != SpecEqual(want.Spec, got.Spec) {
			t.Errorf("%s: SpecDrift and SpecEqual disagree", tc.name)
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

func TestCheckRanges(t *testing.T) {
	cat := catalog.Builtin()
	for _, tc := range []struct {
		name  string
		entry Entry
		want  string
	}{
		{"within", Entry{InstanceType: "ml.p5.48xlarge", Count: ptr(int64(1000))}, ""},
		{"accelerators from a large count", Entry{InstanceType: "ml.p5.48xlarge", Count: ptr(int64(MaxAmount))}, "accelerators would be 80000000"},
		{"vcpu from a large count", Entry{InstanceType: "ml.c5.4xlarge", Count: ptr(int64(MaxAmount))}, "vcpu would be 160000000"},
		{"configured values are Validate's", Entry{InstanceType: "ml.c5.4xlarge", Count: ptr(int64(MaxAmount)), VCPU: ratInt(1), MemoryGiB: ratInt(1), EFA: ptr(int64(0))}, ""},
	} {
		rc, problems := Defaults(cat, Config{Name: "q", Team: "a", Resources: []Entry{tc.entry}})
		if len(problems) > 0 {
			t.Fatalf("%s: %v", tc.name, problems)
		}
		got := CheckRanges(rc)
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: unexpected %v", tc.name, got)
		case tc.want != "" && (len(got) == 0 || !strings.Contains(got[0].Detail, tc.want) || got[0].Entry != 0):
			t.Errorf("%s: %v, want a problem of entry 0 containing %q", tc.name, got, tc.want)
		}
	}
}
