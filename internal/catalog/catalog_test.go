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

func TestNewOverrides(t *testing.T) {
	tests := []struct {
		name     string
		override Override
		key      string
		want     InstanceType
	}{
		{
			name:     "partial override of a built-in keeps the other figures",
			key:      "ml.g5.xlarge",
			override: Override{VCPU: ptr(3.5)},
			want: InstanceType{Name: "ml.g5.xlarge", Accelerators: 1, AcceleratorType: "A10G", AcceleratorResource: gpuRes,
				VCPU: 3.5, MemoryGiB: 16, EFA: 0, Source: SourceProvider},
		},
		{
			name:     "memory and efa of a MIG type keep its profiles",
			key:      "ml.p4d.24xlarge",
			override: Override{MemoryGiB: ptr(1100.5), EFA: ptr(int64(2))},
			want: InstanceType{Name: "ml.p4d.24xlarge", Accelerators: 8, AcceleratorType: "A100 40GB", AcceleratorResource: gpuRes,
				VCPU: 96, MemoryGiB: 1100.5, EFA: 2, MIGProfiles: nvidiaMIG["A100 40GB"], Source: SourceProvider},
		},
		{
			name:     "an empty MIG list replaces the built-in one",
			key:      "ml.p5.48xlarge",
			override: Override{MIGProfiles: []string{}},
			want: InstanceType{Name: "ml.p5.48xlarge", Accelerators: 8, AcceleratorType: "H100", AcceleratorResource: gpuRes,
				VCPU: 192, MemoryGiB: 2048, EFA: 32, Source: SourceProvider},
		},
		{
			name:     "a MIG list replaces the built-in one",
			key:      "ml.p5.48xlarge",
			override: Override{MIGProfiles: []string{"mig-7g.80gb", "mig-1g.10gb"}},
			want: InstanceType{Name: "ml.p5.48xlarge", Accelerators: 8, AcceleratorType: "H100", AcceleratorResource: gpuRes,
				VCPU: 192, MemoryGiB: 2048, EFA: 32, MIGProfiles: []string{"mig-7g.80gb", "mig-1g.10gb"}, Source: SourceProvider},
		},
		{
			name:     "MIG profiles on a built-in GPU type that has none",
			key:      "ml.g6e.48xlarge",
			override: Override{MIGProfiles: []string{"mig-1g.12gb"}},
			want: InstanceType{Name: "ml.g6e.48xlarge", Accelerators: 8, AcceleratorType: "L40S", AcceleratorResource: gpuRes,
				VCPU: 192, MemoryGiB: 1536, EFA: 4, MIGProfiles: []string{"mig-1g.12gb"}, Source: SourceProvider},
		},
		{
			name:     "accelerators on a CPU built-in default to nvidia.com/gpu",
			key:      "ml.m5.xlarge",
			override: Override{Accelerators: ptr(int64(2))},
			want: InstanceType{Name: "ml.m5.xlarge", Accelerators: 2, AcceleratorResource: gpuRes,
				VCPU: 4, MemoryGiB: 16, Source: SourceProvider},
		},
		{
			name:     "accelerators on a Trainium built-in keep the Neuron resource",
			key:      "ml.trn1.32xlarge",
			override: Override{Accelerators: ptr(int64(8))},
			want: InstanceType{Name: "ml.trn1.32xlarge", Accelerators: 8, AcceleratorType: "Trainium", AcceleratorResource: neuronRes,
				VCPU: 128, MemoryGiB: 512, EFA: 8, Source: SourceProvider},
		},
		{
			name:     "Neuron 2.20+ resource name on a Trainium built-in",
			key:      "ml.trn1.32xlarge",
			override: Override{AcceleratorResource: ptr("aws.amazon.com/neuron")},
			want: InstanceType{Name: "ml.trn1.32xlarge", Accelerators: 16, AcceleratorResource: "aws.amazon.com/neuron",
				VCPU: 128, MemoryGiB: 512, EFA: 8, Source: SourceProvider},
		},
		{
			name:     "zero accelerators clears resource, model and inherited MIG profiles",
			key:      "ml.p4d.24xlarge",
			override: Override{Accelerators: ptr(int64(0))},
			want:     InstanceType{Name: "ml.p4d.24xlarge", VCPU: 96, MemoryGiB: 1152, EFA: 4, Source: SourceProvider},
		},
		{
			name:     "another accelerator resource drops the model name and inherited MIG profiles",
			key:      "ml.p4d.24xlarge",
			override: Override{AcceleratorResource: ptr(neuronRes)},
			want: InstanceType{Name: "ml.p4d.24xlarge", Accelerators: 8, AcceleratorResource: neuronRes,
				VCPU: 96, MemoryGiB: 1152, EFA: 4, Source: SourceProvider},
		},
		{
			name:     "the same accelerator resource keeps the model name",
			key:      "ml.g5.12xlarge",
			override: Override{AcceleratorResource: ptr(gpuRes)},
			want: InstanceType{Name: "ml.g5.12xlarge", Accelerators: 4, AcceleratorType: "A10G", AcceleratorResource: gpuRes,
				VCPU: 48, MemoryGiB: 192, EFA: 1, Source: SourceProvider},
		},
		{
			name:     "an empty override marks a built-in as provider-sourced",
			key:      "ml.t3.medium",
			override: Override{},
			want:     InstanceType{Name: "ml.t3.medium", VCPU: 2, MemoryGiB: 4, Source: SourceProvider},
		},
		{
			name:     "new CPU type",
			key:      "ml.r7i.2xlarge",
			override: Override{VCPU: ptr(8.0), MemoryGiB: ptr(64.0)},
			want:     InstanceType{Name: "ml.r7i.2xlarge", VCPU: 8, MemoryGiB: 64, Source: SourceProvider},
		},
		{
			name:     "new GPU type defaults to nvidia.com/gpu and has no model name",
			key:      "ml.g7e.12xlarge",
			override: Override{VCPU: ptr(48.0), MemoryGiB: ptr(512.0), Accelerators: ptr(int64(2)), EFA: ptr(int64(1)), MIGProfiles: []string{"mig-1g.24gb", "mig-2g.48gb"}},
			want: InstanceType{Name: "ml.g7e.12xlarge", Accelerators: 2, AcceleratorResource: gpuRes,
				VCPU: 48, MemoryGiB: 512, EFA: 1, MIGProfiles: []string{"mig-1g.24gb", "mig-2g.48gb"}, Source: SourceProvider},
		},
		{
			name:     "new Neuron type",
			key:      "ml.trn3.48xlarge",
			override: Override{VCPU: ptr(192.0), MemoryGiB: ptr(2048.0), Accelerators: ptr(int64(16)), AcceleratorResource: ptr(neuronRes)},
			want: InstanceType{Name: "ml.trn3.48xlarge", Accelerators: 16, AcceleratorResource: neuronRes,
				VCPU: 192, MemoryGiB: 2048, Source: SourceProvider},
		},
		{
			name:     "new type with a dashed family",
			key:      "ml.p6-b300.48xlarge",
			override: Override{VCPU: ptr(192.0), MemoryGiB: ptr(4096.0), Accelerators: ptr(int64(8))},
			want: InstanceType{Name: "ml.p6-b300.48xlarge", Accelerators: 8, AcceleratorResource: gpuRes,
				VCPU: 192, MemoryGiB: 4096, Source: SourceProvider},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := New(map[string]Override{tc.key: tc.override})
			if len(errs) != 0 {
				t.Fatalf("New: unexpected errors %v", errs)
			}
			got, ok := c.Lookup(tc.key)
			if !ok {
				t.Fatalf("Lookup(%q): not found", tc.key)
			}
			assertType(t, got, tc.want)
			// Other types and the built-in catalog are untouched.
			if b, ok := Builtin().Lookup(tc.key); ok && b.Source != SourceCatalog {
				t.Errorf("Builtin() changed by New: %+v", b)
			}
			if g, _ := c.Lookup("ml.g6.xlarge"); g.Source != SourceCatalog || g.VCPU != 4 {
				t.Errorf("unrelated type changed: %+v", g)
			}
		})
	}
}

func TestNewOverridesKeepBuiltinCatalog(t *testing.T) {
	before, _ := Builtin().Lookup("ml.p4d.24xlarge")
	c, errs := New(map[string]Override{
		"ml.p4d.24xlarge": {VCPU: ptr(1.0), MIGProfiles: []string{"mig-7g.40gb"}},
		"ml.x9.xlarge":    {VCPU: ptr(1.0), MemoryGiB: ptr(1.0)},
	})
	if len(errs) != 0 {
		t.Fatalf("New: %v", errs)
	}
	after, _ := Builtin().Lookup("ml.p4d.24xlarge")
	assertType(t, after, before)
	if _, ok := Builtin().Lookup("ml.x9.xlarge"); ok {
		t.Error("Builtin() gained a provider-only type")
	}
	if got := len(c.Names()); got != len(Builtin().Names())+1 {
		t.Errorf("len(Names()) = %d, want %d", got, len(Builtin().Names())+1)
	}
	if nc, errs := New(nil); len(errs) != 0 || !slices.Equal(nc.Names(), Builtin().Names()) {
		t.Errorf("New(nil) = %v, %v; want the built-in names and no errors", nc.Names(), errs)
	}
}

func TestNewOverrideErrors(t *testing.T) {
	tests := []struct {
		name      string
		overrides map[string]Override
		want      []OverrideError // Detail compared by substring
	}{
		{
			name:      "new type without vcpu",
			overrides: map[string]Override{"ml.x1.large": {MemoryGiB: ptr(8.0)}},
			want:      []OverrideError{{"ml.x1.large", "vcpu", "required"}},
		},
		{
			name:      "new type without memory",
			overrides: map[string]Override{"ml.x1.large": {VCPU: ptr(2.0)}},
			want:      []OverrideError{{"ml.x1.large", "memory_in_gib", "required"}},
		},
		{
			name:      "new type without either, sorted by field",
			overrides: map[string]Override{"ml.x1.large": {Accelerators: ptr(int64(1))}},
			want: []OverrideError{
				{"ml.x1.large", "memory_in_gib", "required"},
				{"ml.x1.large", "vcpu", "required"},
			},
		},
		{
			name:      "zero vcpu on a new type",
			overrides: map[string]Override{"ml.x1.large": {VCPU: ptr(0.0), MemoryGiB: ptr(8.0)}},
			want:      []OverrideError{{"ml.x1.large", "vcpu", "greater than 0"}},
		},
		{
			name:      "zero memory on a new type",
			overrides: map[string]Override{"ml.x1.large": {VCPU: ptr(2.0), MemoryGiB: ptr(0.0)}},
			want:      []OverrideError{{"ml.x1.large", "memory_in_gib", "greater than 0"}},
		},
		{
			name:      "zero vcpu on a built-in",
			overrides: map[string]Override{"ml.c5.large": {VCPU: ptr(0.0)}},
			want:      []OverrideError{{"ml.c5.large", "vcpu", "greater than 0"}},
		},
		{
			name:      "negative vcpu",
			overrides: map[string]Override{"ml.c5.large": {VCPU: ptr(-1.0)}},
			want:      []OverrideError{{"ml.c5.large", "vcpu", "greater than 0"}},
		},
		{
			name:      "negative memory",
			overrides: map[string]Override{"ml.c5.large": {MemoryGiB: ptr(-0.5)}},
			want:      []OverrideError{{"ml.c5.large", "memory_in_gib", "greater than 0"}},
		},
		{
			name:      "NaN vcpu",
			overrides: map[string]Override{"ml.c5.large": {VCPU: ptr(math.NaN())}},
			want:      []OverrideError{{"ml.c5.large", "vcpu", "finite"}},
		},
		{
			name:      "infinite memory",
			overrides: map[string]Override{"ml.c5.large": {MemoryGiB: ptr(math.Inf(1))}},
			want:      []OverrideError{{"ml.c5.large", "memory_in_gib", "finite"}},
		},
		{
			name:      "negative infinite vcpu",
			overrides: map[string]Override{"ml.c5.large": {VCPU: ptr(math.Inf(-1))}},
			want:      []OverrideError{{"ml.c5.large", "vcpu", "finite"}},
		},
		{
			name:      "negative accelerators",
			overrides: map[string]Override{"ml.g5.xlarge": {Accelerators: ptr(int64(-1))}},
			want:      []OverrideError{{"ml.g5.xlarge", "accelerators", "negative"}},
		},
		{
			name:      "negative efa",
			overrides: map[string]Override{"ml.g5.xlarge": {EFA: ptr(int64(-2))}},
			want:      []OverrideError{{"ml.g5.xlarge", "efa", "negative"}},
		},
		{
			name:      "accelerator_resource with zero accelerators on a new type",
			overrides: map[string]Override{"ml.x1.large": {VCPU: ptr(2.0), MemoryGiB: ptr(8.0), AcceleratorResource: ptr(gpuRes)}},
			want:      []OverrideError{{"ml.x1.large", "accelerator_resource", "0 accelerators"}},
		},
		{
			name:      "accelerator_resource on a CPU built-in",
			overrides: map[string]Override{"ml.c5.large": {AcceleratorResource: ptr(neuronRes)}},
			want:      []OverrideError{{"ml.c5.large", "accelerator_resource", "0 accelerators"}},
		},
		{
			name:      "accelerator_resource with accelerators set to 0",
			overrides: map[string]Override{"ml.g5.xlarge": {Accelerators: ptr(int64(0)), AcceleratorResource: ptr(gpuRes)}},
			want:      []OverrideError{{"ml.g5.xlarge", "accelerator_resource", "0 accelerators"}},
		},
		{
			name:      "accelerator_resource that is not an extended resource",
			overrides: map[string]Override{"ml.g5.xlarge": {AcceleratorResource: ptr("gpu")}},
			want:      []OverrideError{{"ml.g5.xlarge", "accelerator_resource", `got "gpu"`}},
		},
		{
			name:      "accelerator_resource naming the EFA interfaces",
			overrides: map[string]Override{"ml.g5.xlarge": {AcceleratorResource: ptr("vpc.amazonaws.com/efa")}},
			want:      []OverrideError{{"ml.g5.xlarge", "accelerator_resource", `got "vpc.amazonaws.com/efa"`}},
		},
		{
			name:      "MIG profile without the mig- prefix",
			overrides: map[string]Override{"ml.p4d.24xlarge": {MIGProfiles: []string{"1g.5gb"}}},
			want:      []OverrideError{{"ml.p4d.24xlarge", "mig_profiles", `did you mean "mig-1g.5gb"`}},
		},
		{
			name:      "MIG profile with 8 slices",
			overrides: map[string]Override{"ml.p4d.24xlarge": {MIGProfiles: []string{"mig-1g.5gb", "mig-8g.80gb"}}},
			want:      []OverrideError{{"ml.p4d.24xlarge", "mig_profiles", `"mig-8g.80gb"`}},
		},
		{
			name:      "MIG profile listed twice",
			overrides: map[string]Override{"ml.p4d.24xlarge": {MIGProfiles: []string{"mig-1g.5gb", "mig-1g.5gb"}}},
			want:      []OverrideError{{"ml.p4d.24xlarge", "mig_profiles", "twice"}},
		},
		{
			name:      "MIG profiles on a CPU type",
			overrides: map[string]Override{"ml.m5.large": {MIGProfiles: []string{"mig-1g.5gb"}}},
			want:      []OverrideError{{"ml.m5.large", "mig_profiles", "need nvidia.com/gpu"}},
		},
		{
			name:      "MIG profiles on a Neuron type",
			overrides: map[string]Override{"ml.trn1.32xlarge": {MIGProfiles: []string{"mig-1g.5gb"}}},
			want:      []OverrideError{{"ml.trn1.32xlarge", "mig_profiles", "need nvidia.com/gpu"}},
		},
		{
			name:      "MIG profiles on a GPU type whose accelerators are set to 0",
			overrides: map[string]Override{"ml.p4d.24xlarge": {Accelerators: ptr(int64(0)), MIGProfiles: []string{"mig-1g.5gb"}}},
			want:      []OverrideError{{"ml.p4d.24xlarge", "mig_profiles", "need nvidia.com/gpu"}},
		},
		{
			name:      "name without the ml. prefix",
			overrides: map[string]Override{"g5.xlarge": {VCPU: ptr(4.0), MemoryGiB: ptr(16.0)}},
			want:      []OverrideError{{"g5.xlarge", "", "ml.<family>.<size>"}},
		},
		{
			name:      "name without a size",
			overrides: map[string]Override{"ml.g5": {VCPU: ptr(4.0), MemoryGiB: ptr(16.0)}},
			want:      []OverrideError{{"ml.g5", "", "ml.<family>.<size>"}},
		},
		{
			name:      "name in upper case",
			overrides: map[string]Override{"ML.G5.XLARGE": {VCPU: ptr(4.0), MemoryGiB: ptr(16.0)}},
			want:      []OverrideError{{"ML.G5.XLARGE", "", "ml.<family>.<size>"}},
		},
		{
			name:      "empty name also reports missing figures",
			overrides: map[string]Override{"": {}},
			want: []OverrideError{
				{"", "", "ml.<family>.<size>"},
				{"", "memory_in_gib", "required"},
				{"", "vcpu", "required"},
			},
		},
		{
			name: "errors of several entries sorted by type then field",
			overrides: map[string]Override{
				"ml.zz.large":  {},
				"ml.c5.large":  {EFA: ptr(int64(-1)), VCPU: ptr(-1.0)},
				"ml.aa.large":  {VCPU: ptr(1.0)},
				"ml.g5.xlarge": {VCPU: ptr(6.0)}, // valid, no error
			},
			want: []OverrideError{
				{"ml.aa.large", "memory_in_gib", "required"},
				{"ml.c5.large", "efa", "negative"},
				{"ml.c5.large", "vcpu", "greater than 0"},
				{"ml.zz.large", "memory_in_gib", "required"},
				{"ml.zz.large", "vcpu", "required"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, errs := New(tc.overrides)
			if c == nil {
				t.Fatal("New returned a nil catalog")
			}
			if len(errs) != len(tc.want) {
				t.Fatalf("New errors = %v, want %d errors like %v", errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				g := errs[i]
				if g.InstanceType != w.InstanceType || g.Field != w.Field || !strings.Contains(g.Detail, w.Detail) {
					t.Errorf("error %d = %#v, want type %q field %q detail containing %q", i, g, w.InstanceType, w.Field, w.Detail)
				}
			}
			// A rejected entry is left out: new types stay unknown, built-ins keep built-in figures.
			for key := range tc.overrides {
				rejected := false
				for _, e := range errs {
					rejected = rejected || e.InstanceType == key
				}
				got, ok := c.Lookup(key)
				builtin, isBuiltin := Builtin().Lookup(key)
				switch {
				case !rejected:
					if !ok || got.Source != SourceProvider {
						t.Errorf("%q: valid entry not applied: %+v", key, got)
					}
				case isBuiltin:
					assertType(t, got, builtin)
				case ok:
					t.Errorf("%q: rejected new type is in the catalog", key)
				}
			}
		})
	}
}

func TestOverrideErrorString(t *testing.T) {
	tests := []struct {
		err  OverrideError
		want string
	}{
		{OverrideError{"ml.g5.xlarge", "vcpu", "must be greater than 0, got 0"}, `instance_types["ml.g5.xlarge"].vcpu: must be greater than 0, got 0`},
		{OverrideError{"g5.xlarge", "", "bad name"}, `instance_types["g5.xlarge"]: bad name`},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	var _ error = OverrideError{}
}

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
