package catalog

import (
	"slices"
	"strings"
	"testing"
)

func TestNamesBySize(t *testing.T) {
	cpuType := Override{VCPU: ptr(2.0), MemoryGiB: ptr(4.0)}
	tests := []struct {
		name      string
		overrides map[string]Override
		// want is a subsequence of the result: these names, in this order.
		want []string
	}{
		{
			name: "sizes of a family smallest first, not in name order",
			want: []string{"ml.c5.large", "ml.c5.xlarge", "ml.c5.2xlarge", "ml.c5.9xlarge", "ml.c5.12xlarge", "ml.c5.24xlarge"},
		},
		{
			name: "families in name order, a family before its longer namesake",
			want: []string{"ml.c5.24xlarge", "ml.c5n.large", "ml.g5.xlarge", "ml.g5.48xlarge", "ml.g6.xlarge", "ml.t3.2xlarge"},
		},
		{
			name: "medium before large",
			want: []string{"ml.t3.medium", "ml.t3.large", "ml.t3.xlarge"},
		},
		{
			name:      "unknown size spellings last in their family, in name order",
			overrides: map[string]Override{"ml.c5.metal": cpuType, "ml.c5.beta": cpuType},
			want:      []string{"ml.c5.24xlarge", "ml.c5.beta", "ml.c5.metal", "ml.c5n.large"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, errs := New(tt.overrides)
			if len(errs) > 0 {
				t.Fatalf("New: %v", errs)
			}
			got := c.NamesBySize()
			if !slices.Equal(slices.Sorted(slices.Values(got)), c.Names()) {
				t.Fatalf("NamesBySize() holds other names than Names(): %v", got)
			}
			at := -1
			for _, name := range tt.want {
				i := slices.Index(got, name)
				if i <= at {
					t.Fatalf("%s at %d, want after %d in %v", name, i, at, got)
				}
				at = i
			}
		})
	}
}

func TestNamesByFamily(t *testing.T) {
	c, errs := New(map[string]Override{"ml.x1.xlarge": {VCPU: ptr(4.0), MemoryGiB: ptr(8.0)}})
	if len(errs) > 0 {
		t.Fatalf("New: %v", errs)
	}
	got := c.NamesByFamily()
	for _, part := range []string{"ml.c5.{large, xlarge, 2xlarge, 4xlarge, 9xlarge, 12xlarge, 18xlarge, 24xlarge}; ml.c5n.{",
		"ml.t3.{medium, large, xlarge, 2xlarge}; ml.trn1.{", "ml.trn2.{3xlarge, 48xlarge}; ml.x1.{xlarge}"} {
		if !strings.Contains(got, part) {
			t.Errorf("NamesByFamily() = %q, want it to contain %q", got, part)
		}
	}
}
