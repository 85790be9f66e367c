package catalog

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	gpuRes    = "nvidia.com/gpu"
	neuronRes = "aws.amazon.com/neurondevice"
)

// NVIDIA's MIG profiles per GPU model, as the SageMaker API names them (mig-<slices>g.<GB>gb):
// NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles"
// (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/), and the profile values the
// SageMaker API accepts (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_AcceleratorPartitionConfig.html).
// Keyed by GPU model, not instance type: every instance with the GPU offers the same list.
var nvidiaMIG = map[string][]string{
	"A100 40GB": {"mig-1g.5gb", "mig-1g.10gb", "mig-2g.10gb", "mig-3g.20gb", "mig-4g.20gb", "mig-7g.40gb"},
	"A100 80GB": {"mig-1g.10gb", "mig-1g.20gb", "mig-2g.20gb", "mig-3g.40gb", "mig-4g.40gb", "mig-7g.80gb"},
	"H100":      {"mig-1g.10gb", "mig-1g.20gb", "mig-2g.20gb", "mig-3g.40gb", "mig-4g.40gb", "mig-7g.80gb"},
	"H200":      {"mig-1g.18gb", "mig-1g.35gb", "mig-2g.35gb", "mig-3g.71gb", "mig-4g.71gb", "mig-7g.141gb"},
	"B200":      {"mig-1g.23gb", "mig-1g.45gb", "mig-2g.45gb", "mig-3g.90gb", "mig-4g.90gb", "mig-7g.180gb"},
	"GB200":     {"mig-1g.23gb", "mig-1g.47gb", "mig-2g.47gb", "mig-3g.93gb", "mig-4g.93gb", "mig-7g.186gb"},
}

// sageMakerMIGValues are the profile values AcceleratorPartitionConfig.Type accepts
// (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_AcceleratorPartitionConfig.html).
var sageMakerMIGValues = []string{
	"mig-1g.5gb", "mig-1g.10gb", "mig-1g.18gb", "mig-1g.20gb", "mig-1g.23gb", "mig-1g.35gb", "mig-1g.45gb", "mig-1g.47gb",
	"mig-2g.10gb", "mig-2g.20gb", "mig-2g.35gb", "mig-2g.45gb", "mig-2g.47gb",
	"mig-3g.20gb", "mig-3g.40gb", "mig-3g.71gb", "mig-3g.90gb", "mig-3g.93gb",
	"mig-4g.20gb", "mig-4g.40gb", "mig-4g.71gb", "mig-4g.90gb", "mig-4g.93gb",
	"mig-7g.40gb", "mig-7g.80gb", "mig-7g.141gb", "mig-7g.180gb", "mig-7g.186gb",
}

// published is a sample of instance types with the figures AWS publishes for the EC2
// instance behind each (ml.X is EC2's X): accelerators and their model, vCPUs, memory, and
// EFA as the number of network cards that carry an EFA interface (the EFA bandwidth divided
// by the per-card bandwidth the page gives). Sources, per family:
//
//	G5     https://aws.amazon.com/ec2/instance-types/g5/
//	G6     https://aws.amazon.com/ec2/instance-types/g6/ (and Gr6 on the same page)
//	G6e    https://aws.amazon.com/ec2/instance-types/g6e/ (100/200/400 Gbps: 1/2/4 cards)
//	P4     https://aws.amazon.com/ec2/instance-types/p4/ (400 Gbps EFA, 4 cards)
//	P5     https://aws.amazon.com/ec2/instance-types/p5/ (p5/p5e 3200 Gbps on 32 cards, p5en on 16)
//	P6     https://aws.amazon.com/ec2/instance-types/p6/ (p6-b200 3.2 Tbps EFAv4 on 8 cards)
//	Trn1   https://aws.amazon.com/ec2/instance-types/trn1/ (trn1 800 Gbps, 8 cards; trn1n 1600, 16)
//	Trn2   https://aws.amazon.com/ec2/instance-types/trn2/ (3.2 Tbps EFAv3, 16 cards)
//	C5/C5n https://aws.amazon.com/ec2/instance-types/c5/
//	M5     https://aws.amazon.com/ec2/instance-types/m5/
//	T3     https://aws.amazon.com/ec2/instance-types/t3/
//	EFA    https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html#efa-instance-types (which sizes support EFA at all)
//
// The figures are written here from those pages, not from builtin.go, so a wrong figure in
// builtin.go for one of these types fails TestBuiltinMatchesPublished.
var published = []struct {
	name    string
	acc     int64
	accType string
	vcpu    float64
	mem     float64
	efa     int64
}{
	{"ml.g5.xlarge", 1, "A10G", 4, 16, 0},
	{"ml.g5.8xlarge", 1, "A10G", 32, 128, 1},
	{"ml.g5.12xlarge", 4, "A10G", 48, 192, 1},
	{"ml.g5.48xlarge", 8, "A10G", 192, 768, 1},
	{"ml.g6.48xlarge", 8, "L4", 192, 768, 1},
	{"ml.gr6.4xlarge", 1, "L4", 16, 128, 0},
	{"ml.g6e.xlarge", 1, "L40S", 4, 32, 0},
	{"ml.g6e.24xlarge", 4, "L40S", 96, 768, 2},
	{"ml.g6e.48xlarge", 8, "L40S", 192, 1536, 4},
	{"ml.p4d.24xlarge", 8, "A100 40GB", 96, 1152, 4},
	{"ml.p4de.24xlarge", 8, "A100 80GB", 96, 1152, 4},
	{"ml.p5.48xlarge", 8, "H100", 192, 2048, 32},
	{"ml.p5e.48xlarge", 8, "H200", 192, 2048, 32},
	{"ml.p5en.48xlarge", 8, "H200", 192, 2048, 16},
	{"ml.p6-b200.48xlarge", 8, "B200", 192, 2048, 8},
	{"ml.trn1.32xlarge", 16, "Trainium", 128, 512, 8},
	{"ml.trn1n.32xlarge", 16, "Trainium", 128, 512, 16},
	{"ml.trn2.48xlarge", 16, "Trainium2", 192, 2048, 16},
	{"ml.c5.large", 0, "", 2, 4, 0},
	{"ml.c5.9xlarge", 0, "", 36, 72, 0},
	{"ml.c5n.large", 0, "", 2, 5.25, 0},
	{"ml.c5n.18xlarge", 0, "", 72, 192, 1},
	{"ml.m5.24xlarge", 0, "", 96, 384, 0},
	{"ml.t3.medium", 0, "", 2, 4, 0},
	{"ml.t3.2xlarge", 0, "", 8, 32, 0},
}

// acceleratorResource is the device plugin resource of each accelerator model's maker.
func acceleratorResource(accType string) string {
	if strings.HasPrefix(accType, "Trainium") {
		return neuronRes
	}
	return gpuRes
}

func TestBuiltinMatchesPublished(t *testing.T) {
	c := Builtin()
	for _, w := range published {
		t.Run(w.name, func(t *testing.T) {
			got, ok := c.Lookup(w.name)
			if !ok {
				t.Fatalf("Lookup(%q): not found", w.name)
			}
			want := InstanceType{
				Name: w.name, Accelerators: w.acc, AcceleratorType: w.accType,
				VCPU: w.vcpu, MemoryGiB: w.mem, EFA: w.efa, MIGProfiles: got.MIGProfiles, Source: SourceCatalog,
			}
			if w.acc > 0 {
				want.AcceleratorResource = acceleratorResource(w.accType)
			}
			assertType(t, got, want)
		})
	}
}

// sizeVCPU is the vCPU count EC2 gives a size: 2 for medium and large, 4 per xlarge.
func sizeVCPU(size string) (float64, bool) {
	switch size {
	case "medium", "large":
		return 2, true
	case "xlarge":
		return 4, true
	}
	n, err := strconv.Atoi(strings.TrimSuffix(size, "xlarge"))
	if err != nil || !strings.HasSuffix(size, "xlarge") {
		return 0, false
	}
	return 4 * float64(n), true
}

// memoryRatioExceptions are the sizes whose memory per vCPU differs from the rest of their
// family on AWS's pages.
var memoryRatioExceptions = map[string]string{
	"ml.t3.medium":  "half the memory of t3.large on the same 2 vCPUs",
	"ml.p5.4xlarge": "the one-GPU size has 256 GiB for 16 vCPUs, the 8-GPU size 2048 for 192",
}

// TestBuiltinInvariants checks rules every entry obeys, whatever its figures: those overrides
// are held to, and those a family's sizes share on AWS's pages.
func TestBuiltinInvariants(t *testing.T) {
	c := Builtin()
	type familyOf struct {
		accType, res string
		memPerVCPU   float64
		first        string
	}
	families := map[string]*familyOf{}
	for _, name := range c.Names() {
		it, _ := c.Lookup(name)
		if !namePattern.MatchString(name) {
			t.Errorf("%s: name does not match ml.<family>.<size>", name)
			continue
		}
		if (it.Accelerators == 0) != (it.AcceleratorResource == "") || (it.Accelerators == 0) != (it.AcceleratorType == "") {
			t.Errorf("%s: accelerators %d with type %q and resource %q", name, it.Accelerators, it.AcceleratorType, it.AcceleratorResource)
		}
		if it.Accelerators > 0 && it.AcceleratorResource != acceleratorResource(it.AcceleratorType) {
			t.Errorf("%s: %s accelerators counted as %q, want %q", name, it.AcceleratorType, it.AcceleratorResource, acceleratorResource(it.AcceleratorType))
		}
		// MIG: only on GPUs NVIDIA partitions, and then NVIDIA's list for that GPU.
		if len(it.MIGProfiles) > 0 {
			want, ok := nvidiaMIG[it.AcceleratorType]
			switch {
			case !ok:
				t.Errorf("%s: MIG profiles %v on %q accelerators, which have none", name, it.MIGProfiles, it.AcceleratorType)
			case !slices.Equal(it.MIGProfiles, want):
				t.Errorf("%s: MIG profiles %v, want NVIDIA's for %s %v", name, it.MIGProfiles, it.AcceleratorType, want)
			}
		}
		for _, p := range it.MIGProfiles {
			if !slices.Contains(sageMakerMIGValues, p) {
				t.Errorf("%s: MIG profile %q is not a value the SageMaker API accepts", name, p)
			}
			if _, err := MIGSlices(p); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		parts := strings.SplitN(name, ".", 3)
		family, size := parts[1], parts[2]
		if want, ok := sizeVCPU(size); !ok || it.VCPU != want {
			t.Errorf("%s: %v vCPUs, want %v for size %s (4 per xlarge)", name, it.VCPU, want, size)
		}
		if it.VCPU <= 0 || it.MemoryGiB <= 0 || it.EFA < 0 {
			t.Errorf("%s: vCPU %v, memory %v GiB, EFA %d", name, it.VCPU, it.MemoryGiB, it.EFA)
			continue
		}
		// One accelerator model per family, and one memory per vCPU but for named sizes.
		f := families[family]
		if f == nil {
			f = &familyOf{accType: it.AcceleratorType, res: it.AcceleratorResource, first: name}
			families[family] = f
		}
		if it.AcceleratorType != f.accType || it.AcceleratorResource != f.res {
			t.Errorf("%s: accelerators %q (%s), but %s of the same family has %q (%s)", name, it.AcceleratorType, it.AcceleratorResource, f.first, f.accType, f.res)
		}
		if _, exempt := memoryRatioExceptions[name]; exempt {
			continue
		}
		ratio := it.MemoryGiB / it.VCPU
		if f.memPerVCPU == 0 {
			f.memPerVCPU = ratio
		} else if math.Abs(ratio-f.memPerVCPU)/f.memPerVCPU > 0.02 {
			t.Errorf("%s: %.3g GiB per vCPU, but the family has %.3g", name, ratio, f.memPerVCPU)
		}
	}
	for name := range memoryRatioExceptions {
		if _, ok := c.Lookup(name); !ok {
			t.Errorf("memory ratio exception %s is not in the catalog", name)
		}
	}
}

func assertType(t *testing.T, got, want InstanceType) {
	t.Helper()
	if got.Name != want.Name {
		t.Errorf("Name = %q, want %q", got.Name, want.Name)
	}
	if got.Accelerators != want.Accelerators {
		t.Errorf("Accelerators = %d, want %d", got.Accelerators, want.Accelerators)
	}
	if got.AcceleratorType != want.AcceleratorType {
		t.Errorf("AcceleratorType = %q, want %q", got.AcceleratorType, want.AcceleratorType)
	}
	if got.AcceleratorResource != want.AcceleratorResource {
		t.Errorf("AcceleratorResource = %q, want %q", got.AcceleratorResource, want.AcceleratorResource)
	}
	if got.VCPU != want.VCPU {
		t.Errorf("VCPU = %v, want %v", got.VCPU, want.VCPU)
	}
	if got.MemoryGiB != want.MemoryGiB {
		t.Errorf("MemoryGiB = %v, want %v", got.MemoryGiB, want.MemoryGiB)
	}
	if got.EFA != want.EFA {
		t.Errorf("EFA = %d, want %d", got.EFA, want.EFA)
	}
	if !slices.Equal(got.MIGProfiles, want.MIGProfiles) {
		t.Errorf("MIGProfiles = %q, want %q", got.MIGProfiles, want.MIGProfiles)
	}
	if got.Source != want.Source {
		t.Errorf("Source = %q, want %q", got.Source, want.Source)
	}
}

func ptr[T any](v T) *T { return &v }

func TestClosest(t *testing.T) {
	tests := []struct {
		query   string
		n       int
		first   string   // must be the first suggestion ("" to skip)
		contain []string // must be among the suggestions
		want    []string // exact result when non-nil
	}{
		{query: "ml.g5.13xlarge", n: 3, first: "ml.g5.12xlarge", contain: []string{"ml.g5.16xlarge"}},
		{query: "g5.12xlarge", n: 3, first: "ml.g5.12xlarge"},
		{query: "ml.p5.48xl", n: 3, first: "ml.p5.48xlarge"},
		{query: "ML.G6E.XLARGE", n: 1, want: []string{"ml.g6e.xlarge"}},
		{query: "  ml.trn1.32xlarge ", n: 2, want: []string{"ml.trn1.32xlarge", "ml.trn1n.32xlarge"}},
		{query: "ml.p5.48xlarge", n: 1, want: []string{"ml.p5.48xlarge"}},
		{query: "ml.p6.48xlarge", n: 1, want: []string{"ml.p6-b200.48xlarge"}},
		{query: "ml.g5.96xlarge", n: 2, contain: []string{"ml.g5.16xlarge"}},
		{query: "ml.c5.8xlarge", n: 2, contain: []string{"ml.c5.18xlarge"}},
		{query: "p4d.24xl", n: 2, want: []string{"ml.p4d.24xlarge", "ml.p4de.24xlarge"}},
		{query: "ml.g5.xlarge", n: 0, want: []string{}},
		{query: "ml.g5.xlarge", n: -1, want: []string{}},
	}
	c := Builtin()
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := c.Closest(tc.query, tc.n)
			if tc.n <= 0 {
				if got != nil {
					t.Fatalf("Closest(%q, %d) = %v, want nil", tc.query, tc.n, got)
				}
				return
			}
			if len(got) > tc.n {
				t.Fatalf("Closest(%q, %d) returned %d names", tc.query, tc.n, len(got))
			}
			if tc.want != nil && !slices.Equal(got, tc.want) {
				t.Errorf("Closest(%q, %d) = %v, want %v", tc.query, tc.n, got, tc.want)
			}
			if tc.first != "" && (len(got) == 0 || got[0] != tc.first) {
				t.Errorf("Closest(%q, %d) = %v, want %q first", tc.query, tc.n, got, tc.first)
			}
			for _, w := range tc.contain {
				if !slices.Contains(got, w) {
					t.Errorf("Closest(%q, %d) = %v, want it to contain %q", tc.query, tc.n, got, w)
				}
			}
		})
	}
}

func TestClosestDeterministicAndBounded(t *testing.T) {
	c := Builtin()
	all := c.Closest("nonsense", 1000)
	if len(all) != len(c.Names()) {
		t.Fatalf("Closest with a large n returned %d names, want all %d", len(all), len(c.Names()))
	}
	// Same-distance ties are broken by name, so repeated calls agree exactly.
	for range 20 {
		if again := c.Closest("nonsense", 1000); !slices.Equal(again, all) {
			t.Fatalf("Closest is not deterministic:\n%v\n%v", all, again)
		}
	}
	// ml.g5.12xlarge and ml.g5.16xlarge are both one edit from ml.g5.13xlarge: name order decides.
	if got := c.Closest("ml.g5.13xlarge", 2); !slices.Equal(got, []string{"ml.g5.12xlarge", "ml.g5.16xlarge"}) {
		t.Errorf("tie order = %v", got)
	}
	// Provider-only types are suggested too.
	pc, _ := New(map[string]Override{"ml.g7.xlarge": {VCPU: ptr(4.0), MemoryGiB: ptr(16.0)}})
	if got := pc.Closest("ml.g7.xlarg", 1); !slices.Equal(got, []string{"ml.g7.xlarge"}) {
		t.Errorf("Closest with a provider type = %v", got)
	}
}

func TestMIGSlices(t *testing.T) {
	valid := []struct {
		profile string
		want    int64
	}{
		{"mig-1g.5gb", 1},
		{"mig-1g.10gb", 1},
		{"mig-2g.20gb", 2},
		{"mig-3g.20gb", 3},
		{"mig-4g.71gb", 4},
		{"mig-7g.141gb", 7},
		{"mig-7g.186gb", 7},
	}
	for _, tc := range valid {
		got, err := MIGSlices(tc.profile)
		if err != nil || got != tc.want {
			t.Errorf("MIGSlices(%q) = %d, %v; want %d, nil", tc.profile, got, err, tc.want)
		}
	}
	invalid := []string{
		"", "1g.5gb", "mig-0g.5gb", "mig-8g.80gb", "mig-1g", "mig-1g.gb", "mig-1g.5GB",
		"MIG-1g.5gb", "mig-1g.5gb ", " mig-1g.5gb", "mig-1g.5", "mig-12g.5gb", "mig-1g.5gb.me",
		"nvidia.com/mig-1g.5gb", "mig-1c.5gb",
	}
	for _, p := range invalid {
		if got, err := MIGSlices(p); err == nil {
			t.Errorf("MIGSlices(%q) = %d, nil; want an error", p, got)
		}
	}
}

func TestLookupReturnsCopy(t *testing.T) {
	for _, c := range []*Catalog{Builtin(), mustNew(t, map[string]Override{"ml.g7.xlarge": {VCPU: ptr(4.0), MemoryGiB: ptr(16.0), Accelerators: ptr(int64(1)), MIGProfiles: []string{"mig-1g.12gb"}}})} {
		for _, name := range []string{"ml.p4d.24xlarge", "ml.p5en.48xlarge", "ml.g7.xlarge"} {
			first, ok := c.Lookup(name)
			if !ok {
				continue
			}
			want := first
			want.MIGProfiles = slices.Clone(first.MIGProfiles)
			first.MIGProfiles[0] = "mig-7g.1gb"
			first.MIGProfiles = append(first.MIGProfiles, "mig-1g.1gb")
			first.VCPU = -1
			again, _ := c.Lookup(name)
			assertType(t, again, want)
		}
	}
	// p5e and p5en share one profile list in the data; changing one must not change the other.
	c := Builtin()
	e, _ := c.Lookup("ml.p5e.48xlarge")
	e.MIGProfiles[0] = "changed"
	en, _ := c.Lookup("ml.p5en.48xlarge")
	if en.MIGProfiles[0] != "mig-1g.18gb" {
		t.Errorf("p5en profiles changed through p5e: %v", en.MIGProfiles)
	}
	// The override's own slice is not kept either.
	profiles := []string{"mig-1g.12gb"}
	pc := mustNew(t, map[string]Override{"ml.g7.xlarge": {VCPU: ptr(4.0), MemoryGiB: ptr(16.0), Accelerators: ptr(int64(1)), MIGProfiles: profiles}})
	profiles[0] = "changed"
	if g, _ := pc.Lookup("ml.g7.xlarge"); g.MIGProfiles[0] != "mig-1g.12gb" {
		t.Errorf("catalog aliases the override's slice: %v", g.MIGProfiles)
	}
	if _, ok := c.Lookup("ml.nope.xlarge"); ok {
		t.Error("Lookup of an unknown type reported ok")
	}
}

func TestNamesReturnsCopy(t *testing.T) {
	c := Builtin()
	names := c.Names()
	if !slices.IsSorted(names) {
		t.Errorf("Names() not sorted: %v", names)
	}
	names[0] = "zzz"
	if c.Names()[0] == "zzz" {
		t.Error("Names() exposes the catalog's slice")
	}
}

func mustNew(t *testing.T, o map[string]Override) *Catalog {
	t.Helper()
	c, errs := New(o)
	if len(errs) != 0 {
		t.Fatalf("New: %v", errs)
	}
	return c
}
