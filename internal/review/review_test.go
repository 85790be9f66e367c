package review

import (
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission/admissiontest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// A change the plan does not hold the figures of is left out of the prediction, and the report
// says which figures it could not take from the plan, and which reads the cluster refused.
func TestBuildInstanceTypesUnknown(t *testing.T) {
	const (
		gpuType = "ml.g5.12xlarge"
		queue   = "team-a"
		reason  = "the provider block's `instance_types` refers to var.types"
	)
	quotaOf := func(gpus string) *kueue.ClusterQueue {
		q := admissiontest.MakeClusterQueue(queue).Cohort("c").
			ResourceGroup(admissiontest.MakeFlavorQuotas(gpuType).Resource("nvidia.com/gpu", gpus).Obj()).Obj()
		return &q
	}
	pending := admissiontest.MakeWorkload("wl", "ns-a").Queue("lq").Request("nvidia.com/gpu", "1").Obj()
	now := admission.Cluster{
		ClusterQueues:   []kueue.ClusterQueue{*quotaOf("0")},
		LocalQueues:     []kueue.LocalQueue{admissiontest.MakeLocalQueue("lq", "ns-a", queue)},
		ResourceFlavors: []kueue.ResourceFlavor{admissiontest.MakeResourceFlavor(gpuType)},
		Workloads:       []kueue.Workload{pending},
	}
	planned, problems := quota.Plan(catalog.Builtin(), quota.Config{Name: "a", Team: "a",
		Resources: []quota.Entry{{InstanceType: gpuType, Accelerators: new(int64(1))}}})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	raise := Change{Address: "hyperpod_compute_quota.a", Team: "a", Planned: &planned, Actions: []string{"update"}}
	store := placeAs{"a": quotaOf("1")}
	notPredicted := raise
	notPredicted.NotPredicted = "ml.custom.xlarge is not in the built-in catalog, and " + reason

	tests := []struct {
		name        string
		change      Change
		unknown     string
		refused     []string
		wantStarts  bool
		wantPresent []string
		wantAbsent  []string
	}{
		{name: "the plan's figures: predicted, no note", change: raise, wantStarts: true,
			wantAbsent: []string{"not in the plan", "not predicted", "built-in catalog's figures", "refused"}},
		{name: "figures not in the plan: built-in ones, said plainly", change: raise, unknown: reason, wantStarts: true,
			wantPresent: []string{reason, "The figures of " + gpuType + " are the built-in catalog's",
				"| " + gpuType + " |", "(with the built-in catalog's figures)"},
			wantAbsent: []string{"predicted without the changes"}},
		{name: "reads refused: named, with the role that grants them", change: raise, wantStarts: true,
			refused:     []string{"list cohorts.kueue.x-k8s.io", "get configmaps kueue-system/kueue-manager-config"},
			wantPresent: []string{"refused list cohorts.kueue.x-k8s.io, get configmaps kueue-system/kueue-manager-config", Role}},
		{name: "a type only the provider knows: not predicted", change: notPredicted, unknown: reason,
			wantPresent: []string{reason, "update; **not predicted**: " + notPredicted.NotPredicted,
				"predicted without the changes not predicted above"},
			wantAbsent: []string{"| " + gpuType + " |"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Build(Input{Changes: []Change{tt.change}, Now: now, Version: "Kueue v0.19", Catalog: catalog.Builtin(),
				InstanceTypesUnknown: tt.unknown, Refused: tt.refused, Store: store})
			if err != nil {
				t.Fatal(err)
			}
			if starts := len(r.Effect.Team(queue).Admitted) == 1; starts != tt.wantStarts {
				t.Errorf("the pending job starts: got %v, want %v (%+v)", starts, tt.wantStarts, r.Effect)
			}
			md := r.Markdown()
			for _, s := range tt.wantPresent {
				if !strings.Contains(md, s) {
					t.Errorf("the report lacks %q:\n%s", s, md)
				}
			}
			for _, s := range tt.wantAbsent {
				if strings.Contains(md, s) {
					t.Errorf("the report has %q:\n%s", s, md)
				}
			}
		})
	}
}

// placeAs places each team's quota as the ClusterQueue given for it.
type placeAs map[string]*kueue.ClusterQueue

func (p placeAs) WithQuota(c admission.Cluster, _ *catalog.Catalog, team string, planned *quota.ResolvedConfig) (admission.Cluster, string, error) {
	q := p[team]
	if planned == nil {
		return c.WithQueue(q.Name, nil), q.Name, nil
	}
	return c.WithQueue(q.Name, q), q.Name, nil
}
