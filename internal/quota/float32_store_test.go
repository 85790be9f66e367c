package quota

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// float32Store is what the SageMaker API cannot hold, as its backend declares it.
var float32Store = StoreLimits{Float32Amounts: true}

// asTheAPIStores is q as the SageMaker API hands it back: VCpu and MemoryInGiB are float32s,
// sent as the SDK writes one (the shortest decimal of the float32) and answered either the same
// way or as the float32 widened to a double (1.4500000476837158 for float32(1.45)); the SDK
// parses the answer as a double and narrows it. Every other amount is an int32 and unchanged.
func asTheAPIStores(t testing.TB, q ComputeQuota) ComputeQuota {
	t.Helper()
	stored := func(v *big.Rat, grid int64) *big.Rat {
		if v == nil {
			return nil
		}
		sent, _ := v.Float32()
		onWire := strconv.FormatFloat(float64(sent), 'g', -1, 32)
		held, err := strconv.ParseFloat(onWire, 32)
		if err != nil {
			t.Fatal(err)
		}
		for _, answer := range []string{strconv.FormatFloat(held, 'g', -1, 32), strconv.FormatFloat(held, 'g', -1, 64)} {
			d, err := strconv.ParseFloat(answer, 64)
			if err != nil {
				t.Fatal(err)
			}
			if float32(d) != float32(held) {
				t.Fatalf("%s sent as %s and answered as %s reads as %v, not %v", RatString(v), onWire, answer, float32(d), float32(held))
			}
		}
		return DecimalFromFloat32(float32(held), grid)
	}
	out := q
	out.AbsoluteBorrowLimits = nil
	for _, l := range q.AbsoluteBorrowLimits {
		l = l.clone()
		l.VCPU, l.MemoryGiB = stored(l.VCPU, VCPUGrid), stored(l.MemoryGiB, MemoryGrid)
		out.AbsoluteBorrowLimits = append(out.AbsoluteBorrowLimits, l)
	}
	out.Resources = nil
	for _, r := range q.Resources {
		r.Count = cloneInt(r.Count)
		r.VCPU, r.MemoryGiB = stored(r.VCPU, VCPUGrid), stored(r.MemoryGiB, MemoryGrid)
		out.Resources = append(out.Resources, r)
	}
	return out
}

// float32Case is one quota the property test plans: an entry of one instance type, sized one
// way, and maybe an absolute borrow limit of that type.
type float32Case struct {
	entry Entry
	limit *AbsoluteBorrowLimit
}

func (c float32Case) config() Config {
	cfg := base(c.entry)
	if c.limit != nil {
		cfg.Sharing.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{c.limit.clone()}
	}
	return cfg
}

func (c float32Case) String() string {
	return dumpEntry(c.entry) + " limits " + func() string {
		if c.limit == nil {
			return "-"
		}
		return dumpLimits([]AbsoluteBorrowLimit{*c.limit})
	}()
}

// float32Cases sizes an entry of it every way (count, accelerators, every MIG profile of the
// type, vcpu, memory_in_gib, and sizing attributes with an amount set beside them) at the
// smallest sizes, at the largest the amount range allows, and at many seeded ratios between.
func float32Cases(it catalog.InstanceType, rng *rand.Rand) []float32Case {
	var cases []float32Case
	add := func(e Entry) {
		e.InstanceType = it.Name
		cases = append(cases, float32Case{entry: e})
	}
	// The largest count whose amounts stay within the API's range.
	largest := max(float64(it.Accelerators), it.VCPU, it.MemoryGiB, float64(it.EFA))
	maxCount := int64(float64(MaxAmount) / largest)
	upTo := func(n int64) int64 { return 1 + rng.Int64N(max(n, 1)) }
	// Millicores and memory: small, around the float32 spacing limits, and up to the range max;
	// half of them moved down to a value the API holds, as the plan's message asks.
	held := func(v *big.Rat, grid int64) *big.Rat {
		if rng.IntN(2) == 0 {
			return floorFloat32(v, grid)
		}
		return v
	}
	vcpu := func() *big.Rat {
		switch rng.IntN(3) {
		case 0:
			return big.NewRat(upTo(int64(it.VCPU*1000)*3), 1000)
		case 1:
			return held(big.NewRat(upTo(40_000_000), 1000), VCPUGrid)
		}
		return held(big.NewRat(upTo(MaxAmount*1000), 1000), VCPUGrid)
	}
	memory := func() *big.Rat {
		switch rng.IntN(4) {
		case 0:
			return big.NewRat(upTo(int64(it.MemoryGiB*10)*3), 10) // one decimal, as users write
		case 1:
			return big.NewRat(upTo(int64(it.MemoryGiB*1024)*3), 1024) // a whole MiB
		case 2:
			return held(big.NewRat(upTo(40_000_000), 1000), MemoryGrid)
		}
		return held(big.NewRat(upTo(MaxAmount*100), 100), MemoryGrid)
	}
	counts := []int64{1, 2, 3, 7, maxCount, maxCount - 1}
	for range 6 {
		counts = append(counts, upTo(maxCount))
	}
	for _, n := range counts {
		add(Entry{Count: i64(n)})
	}
	add(Entry{Count: i64(upTo(maxCount)), VCPU: vcpu()})
	add(Entry{Count: i64(upTo(maxCount)), MemoryGiB: memory()})
	if it.Accelerators > 0 {
		maxAcc := maxCount * it.Accelerators
		for _, n := range []int64{1, it.Accelerators - 1, it.Accelerators + 1, maxAcc, maxAcc - 1, upTo(maxAcc), upTo(maxAcc), upTo(it.Accelerators * 5)} {
			add(Entry{Accelerators: i64(max(n, 1))})
		}
		add(Entry{Accelerators: i64(upTo(maxAcc)), MemoryGiB: memory()})
		maxSlices := maxAcc * 7
		for _, p := range it.MIGProfiles {
			slices, _ := catalog.MIGSlices(p)
			for _, n := range []int64{1, 2, 3, it.Accelerators*7/slices + 1, maxSlices / slices, upTo(maxSlices / slices), upTo(it.Accelerators * 7)} {
				add(Entry{Partition: &Partition{Type: p, Count: max(n, 1)}})
			}
		}
	}
	for range 8 {
		add(Entry{VCPU: vcpu()})
		add(Entry{MemoryGiB: memory()})
	}
	add(Entry{VCPU: vcpu(), MemoryGiB: memory()})
	for range 4 {
		l := AbsoluteBorrowLimit{InstanceType: it.Name, VCPU: vcpu(), MemoryGiB: memory()}
		if it.Accelerators > 0 {
			l.Accelerators = i64(upTo(MaxAmount))
		}
		cases = append(cases, float32Case{entry: Entry{InstanceType: it.Name, Count: i64(1)}, limit: &l})
	}
	return cases
}

// A quota planned for the SageMaker API, stored as the API stores it and read back the way the
// backend reads it, plans to the same quota: the next plan is empty. Over the whole built-in
// catalog, every sizing attribute and many seeded ratios. A store problem may only name an
// amount the user wrote: what the provider computes, the API can hold.
func TestFloat32StoreReadsBackWhatWasPlanned(t *testing.T) {
	cat := catalog.Builtin()
	rng := rand.New(rand.NewPCG(27, 1))
	var planned, rounded, refused, tooLarge int
	for _, name := range cat.Names() {
		it, _ := cat.Lookup(name)
		for _, c := range float32Cases(it, rng) {
			cfg := c.config()
			rc, problems := PlanOn(cat, cfg, float32Store)
			if len(problems) > 0 {
				for _, p := range problems {
					if strings.HasPrefix(p.Summary, "Computed value too large") || p.Summary == "Value too large" {
						tooLarge++
						continue
					}
					if !problemNamesConfiguredAmount(cfg, p) {
						t.Errorf("%s: a problem with an amount the user did not write: %v", c, p)
					}
					refused++
				}
				continue
			}
			planned++
			checkFloat32RoundTrip(t, cat, c.String(), rc)
			rounded += checkRoundedDown(t, cat, c, rc)
		}
	}
	t.Logf("%d quotas planned and read back (%d amounts rounded down below the Kubernetes path's), %d configured amounts refused, %d out of range",
		planned, rounded, refused, tooLarge)
	if planned < 1000 || rounded < 100 || refused < 100 {
		t.Errorf("the cases do not cover the catalog: %d planned, %d rounded, %d refused", planned, rounded, refused)
	}
}

// problemNamesConfiguredAmount reports whether p is about a vcpu or memory_in_gib the
// configuration sets.
func problemNamesConfiguredAmount(cfg Config, p Problem) bool {
	attr := ""
	if len(p.Path) > 0 {
		attr = p.Path[len(p.Path)-1]
	}
	var v, m *big.Rat
	switch {
	case p.Entry >= 0:
		v, m = cfg.Resources[p.Entry].VCPU, cfg.Resources[p.Entry].MemoryGiB
	case len(p.Path) == 4 && p.Path[1] == "absolute_borrow_limits":
		j, _ := strconv.Atoi(p.Path[2])
		v, m = cfg.Sharing.AbsoluteBorrowLimits[j].VCPU, cfg.Sharing.AbsoluteBorrowLimits[j].MemoryGiB
	}
	return attr == "vcpu" && v != nil || attr == "memory_in_gib" && m != nil
}

// checkFloat32RoundTrip stores rc's document as the API stores it, reads it back and plans what
// it read: the API must hold every amount as planned, and the read-back quota must plan to rc.
func checkFloat32RoundTrip(t *testing.T, cat *catalog.Catalog, what string, rc ResolvedConfig) {
	t.Helper()
	sent := ComputeQuotaOf(rc)
	held := asTheAPIStores(t, sent)
	if got, want := dumpComputeQuota(held), dumpComputeQuota(sent); got != want {
		t.Errorf("%s: the API holds\n%s\nbut the plan showed\n%s", what, got, want)
		return
	}
	cfg, back, err := ConfigFromComputeQuota(cat, held)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if got, want := dumpComputeQuota(ComputeQuotaOf(back)), dumpComputeQuota(sent); got != want {
		t.Errorf("%s: read back, it plans to\n%s\nwant\n%s", what, got, want)
		return
	}
	again, problems := PlanOn(cat, cfg, float32Store)
	if len(problems) > 0 {
		t.Errorf("%s: the configuration read back (%s) does not plan: %v", what, dumpConfig(cfg), problems)
		return
	}
	if got, want := dumpComputeQuota(ComputeQuotaOf(again)), dumpComputeQuota(sent); got != want {
		t.Errorf("%s: planned again, it is\n%s\nwant\n%s", what, got, want)
	}
}

// checkRoundedDown: each amount the float32 plan computes is the one the Kubernetes path
// computes, or else the largest grid point below it that the API holds.
// It returns how many amounts it rounded below the Kubernetes path's.
func checkRoundedDown(t *testing.T, cat *catalog.Catalog, c float32Case, rc ResolvedConfig) (rounded int) {
	t.Helper()
	exact, problems := Plan(cat, c.config())
	if len(problems) > 0 {
		t.Errorf("%s: plans for the API but not for Kubernetes: %v", c, problems)
		return 0
	}
	for i, r := range rc.Resources {
		e, k := r.Configured, exact.Resources[i]
		for _, a := range []struct {
			attr            string
			configured      bool
			got, kubernetes *big.Rat
			grid            int64
		}{
			{"vcpu", e.VCPU != nil, r.VCPU, k.VCPU, VCPUGrid},
			{"memory_in_gib", e.MemoryGiB != nil, r.MemoryGiB, k.MemoryGiB, MemoryGrid},
		} {
			what := fmt.Sprintf("%s: %s planned %s for the API, %s for Kubernetes", c, a.attr, RatString(a.got), RatString(a.kubernetes))
			if a.configured {
				if a.got.Cmp(a.kubernetes) != 0 {
					t.Errorf("%s: a configured amount changed", what)
				}
				continue
			}
			if a.got.Cmp(a.kubernetes) > 0 || !SurvivesFloat32(a.got, a.grid) || !new(big.Rat).Mul(a.got, ratInt(a.grid)).IsInt() {
				t.Errorf("%s: not rounded down to a grid point the API holds", what)
				continue
			}
			if a.got.Cmp(a.kubernetes) < 0 {
				rounded++
			}
			step := big.NewRat(1, a.grid)
			for p := new(big.Rat).Add(a.got, step); p.Cmp(a.kubernetes) <= 0; p.Add(p, step) {
				if SurvivesFloat32(p, a.grid) {
					t.Errorf("%s: %s is larger and the API holds it", what, RatString(p))
					break
				}
			}
		}
	}
	return rounded
}

// Computed amounts on a store of 32-bit floats round down to the nearest grid point the store
// holds: every grid point below 16384, fewer above.
func TestFloorFloat32(t *testing.T) {
	tests := []struct {
		in   string
		grid int64
		want string
	}{
		{"1.4509", VCPUGrid, "1.45"}, // the ratio's rounding to millicores, as on Kubernetes
		{"16383.999", VCPUGrid, "16383.999"},
		{"17142.858", VCPUGrid, "17142.857"}, // one float32 there covers both
		{"17142.857", VCPUGrid, "17142.857"},
		{"9999999.999", VCPUGrid, "9999999"}, // float32 spacing 1 there
		{"3103931.66", VCPUGrid, "3103931.5"},
		{"0", VCPUGrid, "0"},
		{"41.142578125", MemoryGrid, "41.142578125"},
		{"16384.0009765625", MemoryGrid, "16384"}, // float32 spacing 2 MiB there
		{"9999995.25", MemoryGrid, "9999995"},
		{"35108.0712890625", MemoryGrid, "35108.0703125"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := floorFloat32(dec(tt.in), tt.grid)
			if got.Cmp(dec(tt.want)) != 0 {
				t.Errorf("floorFloat32(%s, %d) = %s, want %s", tt.in, tt.grid, RatString(got), tt.want)
			}
			if !SurvivesFloat32(got, tt.grid) {
				t.Errorf("%s does not survive the float32 round trip", RatString(got))
			}
		})
	}
}

// The plan for the SageMaker API computes amounts it holds, so the example of a float32 that
// reads back as another number plans without a problem and reads back as planned; the
// Kubernetes path keeps its exact amounts.
func TestPlanOnFloat32Store(t *testing.T) {
	cat := catalog.Builtin()
	tests := []struct {
		name                 string
		entry                Entry
		vcpu, memory         string // on the float32 store
		kubeVCPU, kubeMemory string
	}{
		{"fractional ratio", Entry{InstanceType: "ml.c5.9xlarge", MemoryGiB: dec("2.9")}, "1.45", "2.9", "1.45", "2.9"},
		{"MIG partition", Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 1}},
			"1.714", "20.5712890625", "1.714", "20.5712890625"},
		{"many MIG partitions", Entry{InstanceType: "ml.p4d.24xlarge", Partition: &Partition{Type: "mig-1g.5gb", Count: 10001}},
			"17144.57", "205734.84375", "17144.571", "205734.8564453125"},
		{"large count on fractional memory", Entry{InstanceType: "ml.c5n.large", Count: i64(1904761)},
			"3809522", "9999995", "3809522", "9999995.25"},
		{"memory beyond 16384 GiB", Entry{InstanceType: "ml.c5.12xlarge", VCPU: dec("17554.035")},
			"17554.035", "35108.06640625", "17554.035", "35108.0693359375"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, store := range []struct {
				limits       StoreLimits
				vcpu, memory string
			}{{float32Store, tt.vcpu, tt.memory}, {StoreLimits{}, tt.kubeVCPU, tt.kubeMemory}} {
				rc, problems := PlanOn(cat, base(tt.entry), store.limits)
				if len(problems) > 0 {
					t.Fatalf("float32 %v: %v", store.limits.Float32Amounts, problems)
				}
				if r := rc.Resources[0]; r.VCPU.Cmp(dec(store.vcpu)) != 0 || r.MemoryGiB.Cmp(dec(store.memory)) != 0 {
					t.Errorf("float32 %v: planned vcpu %s, memory %s; want %s, %s", store.limits.Float32Amounts,
						RatString(r.VCPU), RatString(r.MemoryGiB), store.vcpu, store.memory)
				}
				if store.limits.Float32Amounts {
					checkFloat32RoundTrip(t, cat, tt.name, rc)
				}
			}
		})
	}
}
