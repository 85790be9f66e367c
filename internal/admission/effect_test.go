package admission_test

import (
	"slices"
	"testing"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	at "github.com/quotaworks/terraform-provider-hyperpod/internal/admission/admissiontest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// Effect reports what the change does, not what Kueue would do anyway.
func TestEffect(t *testing.T) {
	lender := func(nominal string) kueue.ClusterQueue {
		return at.MakeClusterQueue("b").Cohort("c").ResourceGroup(gpus("p4", nominal, "0")).Obj()
	}
	borrower := at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "4", "4")).Obj()
	tests := []struct {
		name      string
		now, next admission.Cluster
		want      []string
	}{
		{
			name: "raising a quota admits the pending workload that waited for it",
			now:  cluster([]kueue.ClusterQueue{borrower, lender("0")}, running("r", "a", "p4", "4", 0, time.Minute), pending("p", "a", "2", 0, 0)),
			next: cluster([]kueue.ClusterQueue{borrower, lender("2")}, running("r", "a", "p4", "4", 0, time.Minute), pending("p", "a", "2", 0, 0)),
			want: []string{"a admitted ns-a/p on p4", "a over p4 nvidia.com/gpu 6/4: ns-a/p,ns-a/r"},
		},
		{
			name: "a workload Kueue admits whether or not the quota changes is not the change's effect",
			now:  cluster([]kueue.ClusterQueue{borrower, lender("4")}, pending("p", "a", "2", 0, 0)),
			next: cluster([]kueue.ClusterQueue{borrower, lender("2")}, pending("p", "a", "2", 0, 0)),
			want: nil,
		},
		{
			name: "lowering the lender's quota leaves the borrower over nominal as before: nothing new",
			now:  cluster([]kueue.ClusterQueue{borrower, lender("4")}, running("r", "a", "p4", "6", 0, time.Minute)),
			next: cluster([]kueue.ClusterQueue{borrower, lender("2")}, running("r", "a", "p4", "6", 0, time.Minute)),
			want: nil,
		},
		{
			name: "lowering the borrower's own nominal quota makes its running workload preemptible",
			now:  cluster([]kueue.ClusterQueue{borrower, lender("4")}, running("r", "a", "p4", "4", 0, time.Minute)),
			next: cluster([]kueue.ClusterQueue{at.MakeClusterQueue("a").Cohort("c").ResourceGroup(gpus("p4", "2", "4")).Obj(), lender("4")},
				running("r", "a", "p4", "4", 0, time.Minute)),
			want: []string{"a over p4 nvidia.com/gpu 4/2: ns-a/r"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summary(admission.Effect(tt.now, tt.next)); !slices.Equal(got, tt.want) {
				t.Errorf("Effect:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
