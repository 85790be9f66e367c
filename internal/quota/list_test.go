package quota

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

func TestListFilter(t *testing.T) {
	types := []string{"ml.g5.12xlarge", "ml.c5.4xlarge"}
	for _, tc := range []struct {
		name   string
		f      ListFilter
		team   string
		cohort string
		want   bool
	}{
		{"empty selects all", ListFilter{}, "ml", "any", true},
		{"prefix", ListFilter{TeamPrefix: "ml-"}, "ml-research", "c", true},
		{"prefix misses", ListFilter{TeamPrefix: "ml-"}, "vision", "c", false},
		{"cohort", ListFilter{Cohort: "research"}, "ml", "research", true},
		{"other cohort", ListFilter{Cohort: "research"}, "ml", "prod", false},
		{"instance type", ListFilter{InstanceType: "ml.c5.4xlarge"}, "ml", "c", true},
		{"instance type missing", ListFilter{InstanceType: "ml.p5.48xlarge"}, "ml", "c", false},
		{"all three", ListFilter{TeamPrefix: "ml", Cohort: "c", InstanceType: "ml.g5.12xlarge"}, "ml-a", "c", true},
		{"all three, prefix misses", ListFilter{TeamPrefix: "ml", Cohort: "c", InstanceType: "ml.g5.12xlarge"}, "cv", "c", false},
	} {
		if got := tc.f.SelectsQuota(tc.team, tc.cohort, types); got != tc.want {
			t.Errorf("%s: SelectsQuota(%q, %q) = %v, want %v", tc.name, tc.team, tc.cohort, got, tc.want)
		}
	}
	if (ListFilter{TeamPrefix: "ml"}).ByQuota() || !(ListFilter{Cohort: "c"}).ByQuota() || !(ListFilter{InstanceType: "t"}).ByQuota() {
		t.Error("ByQuota: only cohort and instance type select by quota")
	}
}

func TestNamesOfListedObjects(t *testing.T) {
	for name, want := range map[string]string{
		"hyperpod-ns-ml-research": "ml-research",
		"hyperpod-ns-":            "",
		"hyperpod-ns-Upper":       "",
		"kube-system":             "",
	} {
		team, ok := TeamFromNamespaceName(name)
		if ok != (want != "") || (ok && team != want) {
			t.Errorf("TeamFromNamespaceName(%q) = %q, %v; want %q", name, team, ok, want)
		}
		if ok && NamespaceName(team) != name {
			t.Errorf("NamespaceName(%q) = %q, not %q", team, NamespaceName(team), name)
		}
	}
	for name, want := range map[string]string{"training-priority": "training", "-priority": "", "training": ""} {
		class, ok := PriorityClassOfObjectName(name)
		if ok != (want != "") || (ok && class != want) {
			t.Errorf("PriorityClassOfObjectName(%q) = %q, %v; want %q", name, class, ok, want)
		}
	}
}

// A queue the rendering reproduces is represented; one with a second resource group, or with a
// column the rendering covers besides, is not, and the difference is named.
func TestNotRepresented(t *testing.T) {
	cat := catalog.Builtin()
	_, cq := mustRender(t, cat, base(g512(1)))
	read := func(mut func(*kueue.ClusterQueue)) []string {
		t.Helper()
		x := throughAPIServer(t, cq)
		mut(&x)
		_, rc, err := FromClusterQueue(cat, x)
		if err != nil {
			t.Fatal(err)
		}
		return NotRepresented(cat, x, rc)
	}
	if lost := read(func(*kueue.ClusterQueue) {}); len(lost) > 0 {
		t.Fatalf("a rendered queue is not represented: %v", lost)
	}
	// Written by hand without the provider's annotations: still the rendered shape.
	if lost := read(func(x *kueue.ClusterQueue) { x.Annotations = nil }); len(lost) > 0 {
		t.Fatalf("the rendered shape without annotations is not represented: %v", lost)
	}
	lost := read(func(x *kueue.ClusterQueue) {
		x.Spec.ResourceGroups = append(x.Spec.ResourceGroups, kueue.ResourceGroup{
			CoveredResources: []corev1.ResourceName{"example.com/fpga"},
			Flavors:          []kueue.FlavorQuotas{{Name: "fpga", Resources: []kueue.ResourceQuota{{Name: "example.com/fpga", NominalQuota: mustQ("1")}}}},
		})
	})
	if len(lost) != 1 || !strings.Contains(lost[0], "resourceGroups has 2 groups, want 1") {
		t.Fatalf("second resource group: %v", lost)
	}
	lost = read(func(x *kueue.ClusterQueue) {
		g := &x.Spec.ResourceGroups[0]
		g.CoveredResources = g.CoveredResources[:3]
		g.Flavors[0].Resources = g.Flavors[0].Resources[:3]
	})
	if len(lost) != 1 || !strings.Contains(lost[0], "coveredResources") {
		t.Fatalf("fewer covered resources: %v", lost)
	}
}

func TestLocalQueueNotRepresented(t *testing.T) {
	own := RenderLocalQueue("ml", "")
	if lost := LocalQueueNotRepresented("ml", &own); len(lost) > 0 {
		t.Fatalf("the team's own LocalQueue: %v", lost)
	}
	if lost := LocalQueueNotRepresented("ml", nil); len(lost) > 0 {
		t.Fatalf("a missing LocalQueue is created, nothing is lost: %v", lost)
	}
	other := own
	other.Spec.ClusterQueue = "shared-cq"
	if lost := LocalQueueNotRepresented("ml", &other); len(lost) != 1 || !strings.Contains(lost[0], `feeds ClusterQueue "shared-cq"`) {
		t.Fatalf("a LocalQueue feeding another ClusterQueue: %v", lost)
	}
}
