package catalog

// Instance type overrides: what they change in the built-in catalog, what they leave, and how
// each mistake in them is reported.

import (
	"math"
	"slices"
	"strings"
	"testing"
)

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
