package quota

import (
	"math"
	"math/big"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// Bits of FuzzResolve's mask: which attributes are configured.
const (
	fuzzCount = 1 << iota
	fuzzAccelerators
	fuzzVCPU
	fuzzMemory
	fuzzEFA
	fuzzPartition
	fuzzBorrowLimit
	fuzzAbsoluteLimit
)

// fuzzConfig builds a quota from the fuzzer's inputs: one entry of the typeIdx-th instance type
// with the attributes the mask selects, plus an ml.c5.xlarge entry when extra >= 128; an
// absolute limit takes count when extra is odd, and the entry's partition when extra&2 is set.
func fuzzConfig(cat *catalog.Catalog, typeIdx, mask uint8, count, acc int64, vcpu, mem float64, efa int64,
	extra uint8, partCount int64, strategy uint8, borrow int64) Config {
	all := cat.Names()
	it, _ := cat.Lookup(all[int(typeIdx)%len(all)])
	e := Entry{InstanceType: it.Name}
	if mask&fuzzCount != 0 {
		e.Count = i64(count)
	}
	if mask&fuzzAccelerators != 0 {
		e.Accelerators = i64(acc)
	}
	if mask&fuzzVCPU != 0 {
		e.VCPU = DecimalFromFloat(vcpu)
	}
	if mask&fuzzMemory != 0 {
		e.MemoryGiB = DecimalFromFloat(mem)
	}
	if mask&fuzzEFA != 0 {
		e.EFA = i64(efa)
	}
	if mask&fuzzPartition != 0 {
		profiles := it.MIGProfiles
		if len(profiles) == 0 {
			profiles = []string{"mig-1g.5gb", "mig-3g.40gb", "1g.5gb"}
		}
		e.Partition = &Partition{Type: profiles[int(extra%64)%len(profiles)], Count: partCount}
	}
	c := base(e)
	if extra >= 128 && it.Name != "ml.c5.xlarge" {
		c.Resources = append(c.Resources, Entry{InstanceType: "ml.c5.xlarge", Count: i64(1)})
	}
	switch strategy % 4 {
	case 1:
		c.Sharing.Strategy = str(StrategyLendAndBorrow)
	case 2:
		c.Sharing.Strategy = str(StrategyLend)
	case 3:
		c.Sharing.Strategy = str(StrategyDontLend)
	}
	if mask&fuzzBorrowLimit != 0 {
		c.Sharing.BorrowLimit = i64(borrow)
	}
	if mask&fuzzAbsoluteLimit != 0 {
		a := AbsoluteBorrowLimit{InstanceType: it.Name, MemoryGiB: DecimalFromFloat(mem)}
		if it.Accelerators > 0 {
			a.Accelerators = i64(acc)
		}
		if strategy%8 >= 4 {
			a.VCPU = DecimalFromFloat(vcpu)
		}
		if extra&1 != 0 {
			a.Count = i64(count)
		}
		if extra&2 != 0 && e.Partition != nil {
			p := *e.Partition
			a.Partition, a.Accelerators = &p, nil
		}
		c.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{a}
	}
	return c
}

// FuzzResolve checks, for any combination of attributes and values: no panic; for valid
// configurations no negative or non-finite value, configured values unchanged by defaults,
// computed values on their grid, a stable render -> read -> render round trip, and a quota
// planned for the SageMaker API read back from its float32s as planned.
//
//	go test -fuzz=FuzzResolve ./internal/quota/
func FuzzResolve(f *testing.F) {
	// The worked examples of the ratio rule (type indices into the sorted built-in names) and a
	// few edges; testdata/fuzz/FuzzResolve holds more.
	seed := func(typ string, mask uint8, count, acc int64, vcpu, mem float64, efa int64, extra uint8, partCount int64, strategy uint8, borrow int64) {
		for i, n := range catalog.Builtin().Names() {
			if n == typ {
				f.Add(uint8(i), mask, count, acc, vcpu, mem, efa, extra, partCount, strategy, borrow)
				return
			}
		}
		f.Fatalf("no instance type %s", typ)
	}
	seed("ml.g5.12xlarge", fuzzCount, 1, 0, 0, 0, 0, 0, 0, 0, 0)
	seed("ml.g6e.48xlarge", fuzzAccelerators, 0, 4, 0, 0, 0, 0, 0, 0, 0)
	seed("ml.g5.xlarge", fuzzMemory, 0, 0, 0, 8, 0, 0, 0, 0, 0)
	seed("ml.trn1.32xlarge", fuzzAccelerators, 0, 8, 0, 0, 0, 0, 0, 0, 0)
	seed("ml.p4d.24xlarge", fuzzPartition, 0, 0, 0, 0, 0, 0, 2, 0, 0)
	seed("ml.p4d.24xlarge", fuzzPartition, 0, 0, 0, 0, 0, 0, 10001, 0, 0) // beyond a float32's millicores
	seed("ml.c5n.large", fuzzCount, 1904761, 0, 0, 0, 0, 0, 0, 0, 0)      // memory 9999995.25: the API holds 9999995
	seed("ml.c5.9xlarge", fuzzCount|fuzzAbsoluteLimit, 1, 0, 20000.001, 16384.5, 0, 0, 0, 4, 0)
	seed("ml.g5.24xlarge", fuzzAccelerators|fuzzVCPU|fuzzMemory, 0, 16, 200, 2, 0, 0, 0, 0, 0)
	seed("ml.c5.9xlarge", fuzzMemory, 0, 0, 0, 2.9, 0, 0, 0, 0, 0)
	seed("ml.g5.12xlarge", fuzzAccelerators|fuzzVCPU|fuzzMemory|fuzzAbsoluteLimit|fuzzBorrowLimit, 0, 3, 12.5, 2.9, 0, 200, 0, 4, 100)
	seed("ml.c5.9xlarge", fuzzCount|fuzzAbsoluteLimit, 2, 0, 0, 3, 0, 1, 0, 0, 0)
	seed("ml.p4d.24xlarge", fuzzPartition|fuzzAbsoluteLimit, 0, 0, 0, 1, 0, 2, 3, 0, 0)
	seed("ml.m5.large", fuzzVCPU|fuzzEFA, 0, 0, 1.2345, 0, -1, 0, 0, 3, 0)
	seed("ml.p5.48xlarge", fuzzCount|fuzzAccelerators, MaxAmount, -1, 0, 0, 0, 130, 0, 2, 10001)
	seed("ml.c5.large", fuzzMemory|fuzzBorrowLimit, 0, 0, 0, 1e-9, 0, 0, 0, 1, 33)
	seed("ml.t3.medium", fuzzVCPU|fuzzMemory, 0, 0, math.Inf(1), math.NaN(), 0, 0, 0, 0, 0)

	cat := catalog.Builtin()
	f.Fuzz(func(t *testing.T, typeIdx, mask uint8, count, acc int64, vcpu, mem float64, efa int64,
		extra uint8, partCount int64, strategy uint8, borrow int64) {
		c := fuzzConfig(cat, typeIdx, mask, count, acc, vcpu, mem, efa, extra, partCount, strategy, borrow)
		original := dumpConfig(c)

		ps := Validate(cat, c)
		rc := Defaults(cat, c)
		if got := dumpConfig(c); got != original {
			t.Fatalf("the input changed:\n%s\n%s", original, got)
		}
		if len(ps) > 0 {
			// Invalid: nothing may panic, whatever the values.
			if cq, err := RenderClusterQueue(cat, rc); err == nil {
				_, _, _ = FromClusterQueue(cat, cq)
			}
			for _, p := range ps {
				if p.Detail == "" || p.Summary == "" {
					t.Fatalf("empty problem text: %+v", p)
				}
			}
			return
		}
		for i, r := range rc.Resources {
			e := c.Resources[i]
			if got, want := dumpEntry(r.Configured), dumpEntry(e); got != want {
				t.Fatalf("configured entry changed: %s, want %s", got, want)
			}
			if r.Accelerators < 0 || r.EFA < 0 || r.VCPU.Sign() < 0 || r.MemoryGiB.Sign() < 0 {
				t.Fatalf("negative value: %s", dumpResolved(rc))
			}
			for _, v := range []*big.Rat{r.VCPU, r.MemoryGiB} {
				if f := FloatFromRat(v); math.IsInf(f, 0) || math.IsNaN(f) {
					t.Fatalf("non-finite value: %s", dumpResolved(rc))
				}
			}
			if e.Accelerators != nil && *e.Accelerators != r.Accelerators || e.EFA != nil && *e.EFA != r.EFA ||
				e.VCPU != nil && e.VCPU.Cmp(r.VCPU) != 0 || e.MemoryGiB != nil && e.MemoryGiB.Cmp(r.MemoryGiB) != 0 {
				t.Fatalf("a configured value was changed by defaults: %s -> %s", dumpEntry(e), dumpResolved(rc))
			}
			if e.VCPU == nil && !new(big.Rat).Mul(r.VCPU, ratInt(1000)).IsInt() {
				t.Fatalf("computed vcpu %s is not whole millicores", RatString(r.VCPU))
			}
			if e.MemoryGiB == nil && !new(big.Rat).Mul(r.MemoryGiB, ratInt(1024)).IsInt() {
				t.Fatalf("computed memory %s is not whole MiB", RatString(r.MemoryGiB))
			}
			// The float handed to Terraform converts back to the same decimal when the value
			// came from a decimal the user wrote.
			if e.VCPU != nil && DecimalFromFloat(FloatFromRat(r.VCPU)).Cmp(r.VCPU) != 0 {
				t.Fatalf("vcpu %s does not survive the float round trip", RatString(r.VCPU))
			}
		}
		checkRoundTrip(t, cat, c)
		if len(CheckRanges(rc)) == 0 { // what the API can hold
			checkComputeQuotaRoundTrip(t, cat, rc)
		}
		// Planned for the SageMaker API's 32-bit floats: it holds and hands back what the plan
		// shows, and refuses only amounts the user wrote.
		rc32, problems := PlanOn(cat, c, float32Store)
		for _, p := range problems {
			if p.Summary == "Amount the SageMaker API cannot hold" && !problemNamesConfiguredAmount(c, p) {
				t.Fatalf("a problem with an amount the user did not write: %v", p)
			}
		}
		if len(problems) == 0 {
			checkFloat32RoundTrip(t, cat, dumpConfig(c), rc32)
		}
	})
}

// checkComputeQuotaRoundTrip: a resolved quota sent to the SageMaker API and read back plans to
// the same document (the API holds neither cohort nor EFA, so they are not compared).
func checkComputeQuotaRoundTrip(t *testing.T, cat *catalog.Catalog, rc ResolvedConfig) {
	t.Helper()
	sent := ComputeQuotaOf(rc)
	_, back, err := ConfigFromComputeQuota(cat, sent)
	if err != nil {
		t.Fatalf("%s: %v", dumpResolved(rc), err)
	}
	if got, want := dumpComputeQuota(ComputeQuotaOf(back)), dumpComputeQuota(sent); got != want {
		t.Fatalf("read back from the API document:\n%s\nwant\n%s", got, want)
	}
}
