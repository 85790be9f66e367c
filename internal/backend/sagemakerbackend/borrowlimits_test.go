package sagemakerbackend

import (
	"math/big"
	"reflect"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Every field of an absolute borrow limit goes to the API and comes back: count and the
// accelerator partition as well as the amounts.
func TestAbsoluteBorrowLimitsBothWays(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	tests := []struct {
		name  string
		limit quota.AbsoluteBorrowLimit
	}{
		{"count", quota.AbsoluteBorrowLimit{InstanceType: "ml.g5.12xlarge", Count: i(2)}},
		{"count and vcpu", quota.AbsoluteBorrowLimit{InstanceType: "ml.g5.12xlarge", Count: i(1), VCPU: big.NewRat(21, 2)}},
		{"partition", quota.AbsoluteBorrowLimit{InstanceType: "ml.p4d.24xlarge", Partition: &quota.Partition{Type: "mig-1g.5gb", Count: 3}}},
		{"amounts", quota.AbsoluteBorrowLimit{InstanceType: "ml.g5.12xlarge", Accelerators: i(1), MemoryGiB: big.NewRat(3, 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := quota.ComputeQuota{Strategy: quota.StrategyLendAndBorrow, BorrowLimit: i(50), AbsoluteBorrowLimits: []quota.AbsoluteBorrowLimit{tt.limit}}
			c := sdkConfig(sent)
			if got := c.ResourceSharingConfig.AbsoluteBorrowLimits; len(got) != 1 || (tt.limit.Count != nil) != (got[0].Count != nil) ||
				(tt.limit.Partition != nil) != (got[0].AcceleratorPartition != nil) {
				t.Fatalf("sent %+v", got)
			}
			back := documentOf("q", "", "", nil, c).AbsoluteBorrowLimits
			if len(back) != 1 || !reflect.DeepEqual(back[0].Count, tt.limit.Count) || !reflect.DeepEqual(back[0].Partition, tt.limit.Partition) ||
				!reflect.DeepEqual(back[0].Accelerators, tt.limit.Accelerators) || !ratEqual(back[0].VCPU, tt.limit.VCPU) || !ratEqual(back[0].MemoryGiB, tt.limit.MemoryGiB) {
				t.Fatalf("read back %+v, sent %+v", back, tt.limit)
			}
		})
	}
}

func ratEqual(a, b *big.Rat) bool { return (a == nil) == (b == nil) && (a == nil || a.Cmp(b) == 0) }
