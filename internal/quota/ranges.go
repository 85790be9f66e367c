package quota

import (
	"fmt"
	"math"
	"math/big"
)

// CheckRanges checks the values Defaults computed (the configured ones were checked by
// Validate) against the limits of the AWS compute quota API (0 to MaxAmount for accelerators,
// vCPU, memory and EFA) and against what a Kubernetes quantity holds: memory in bytes must fit
// an int64. A large count on a large instance type can exceed them, e.g. count = 10000000 of a
// type with 8 GPUs.
func CheckRanges(rc ResolvedConfig) []Problem {
	var v problemList
	maxBytes := new(big.Rat).SetInt64(math.MaxInt64)
	for i, r := range rc.Resources {
		if r.Unknown {
			continue
		}
		c := r.Configured
		if c.Accelerators == nil {
			v.checkComputedInt(i, "accelerators", r.Accelerators, c)
		}
		if c.EFA == nil {
			v.checkComputedInt(i, "efa", r.EFA, c)
		}
		if c.VCPU == nil && r.VCPU != nil && r.VCPU.Cmp(ratInt(MaxAmount)) > 0 {
			v.add(i, []string{"vcpu"}, "Computed value too large",
				"vcpu would be %s, but a compute quota allows at most %d vCPU per instance type. %s", RatString(r.VCPU), MaxAmount, shrinkHint(c))
		}
		if c.MemoryGiB == nil && r.MemoryGiB != nil && r.MemoryGiB.Cmp(ratInt(MaxAmount)) > 0 {
			v.add(i, []string{"memory_in_gib"}, "Computed value too large",
				"memory_in_gib would be %s, but a compute quota allows at most %d GiB per instance type. %s", RatString(r.MemoryGiB), MaxAmount, shrinkHint(c))
		}
		if r.MemoryGiB != nil && gibToBytes(r.MemoryGiB).Cmp(maxBytes) > 0 {
			v.add(i, []string{"memory_in_gib"}, "Memory too large",
				"memory_in_gib = %s GiB is more bytes than a Kubernetes quantity holds (an int64). Set a smaller amount.", RatString(r.MemoryGiB))
		}
	}
	return v.problems
}

func (v *problemList) checkComputedInt(entry int, attr string, n int64, c Entry) {
	if n < 0 || n > MaxAmount {
		v.add(entry, []string{attr}, "Computed value too large",
			"%s would be %d, but a compute quota allows 0 to %d per instance type. %s", attr, n, MaxAmount, shrinkHint(c))
	}
}

func shrinkHint(c Entry) string {
	if c.Count != nil {
		return fmt.Sprintf("count = %d makes it exceed that limit: lower count, or set this amount explicitly within the limit.", *c.Count)
	}
	return "Lower the amount the entry is sized by, or set this amount explicitly."
}
