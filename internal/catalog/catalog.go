// Package catalog knows the per-instance capacity of SageMaker HyperPod instance types.
//
// It is pure data and lookup logic: no Terraform or Kubernetes client imports.
package catalog

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Accelerator resource names as the device plugins register them.
const (
	// ResourceNvidiaGPU is the extended resource of the NVIDIA device plugin.
	ResourceNvidiaGPU = "nvidia.com/gpu"
	// ResourceNeuronDevice is the extended resource of the AWS Neuron device plugin.
	ResourceNeuronDevice = "aws.amazon.com/neurondevice"
	// ResourceEFA is the extended resource of the EFA device plugin; never an accelerator.
	ResourceEFA = "vpc.amazonaws.com/efa"
)

// Source tells where an instance type's figures come from.
type Source string

const (
	// SourceCatalog marks figures from the built-in catalog.
	SourceCatalog Source = "catalog"
	// SourceProvider marks figures set or changed by the provider's instance_types.
	SourceProvider Source = "provider"
)

// InstanceType is the capacity of one instance of a type.
type InstanceType struct {
	Name                string
	Accelerators        int64
	AcceleratorType     string // marketing name, e.g. "A10G"; empty when unknown or none
	AcceleratorResource string // e.g. nvidia.com/gpu; empty when Accelerators is 0
	VCPU                float64
	MemoryGiB           float64
	EFA                 int64
	MIGProfiles         []string // e.g. "mig-1g.5gb", in the order NVIDIA lists them
	Source              Source
}

// clone returns a copy that shares no memory with t, so callers cannot change catalog data.
func (t InstanceType) clone() InstanceType {
	t.MIGProfiles = slices.Clone(t.MIGProfiles)
	return t
}

// hasNvidiaGPU reports whether MIG profiles can apply: MIG is an NVIDIA GPU feature.
func (t InstanceType) hasNvidiaGPU() bool {
	return t.Accelerators > 0 && t.AcceleratorResource == ResourceNvidiaGPU
}

// Override holds the values of one provider `instance_types` entry; a nil field keeps the built-in figure.
type Override struct {
	Accelerators        *int64
	AcceleratorResource *string
	VCPU                *float64
	MemoryGiB           *float64
	EFA                 *int64
	MIGProfiles         []string // nil keeps the built-in list; non-nil (even empty) replaces it
}

// OverrideError says which override field is wrong and why (Field is the attribute name: "vcpu",
// "memory_in_gib", "accelerators", "accelerator_resource", "efa", "mig_profiles", or "" for the
// whole entry).
type OverrideError struct{ InstanceType, Field, Detail string }

// Error renders the error as the Terraform attribute path followed by the reason, so a user can
// find the offending line in the provider block.
func (e OverrideError) Error() string {
	path := "instance_types[" + strconv.Quote(e.InstanceType) + "]"
	if e.Field != "" {
		path += "." + e.Field
	}
	return path + ": " + e.Detail
}

// Catalog is an immutable set of instance types, safe for concurrent use.
type Catalog struct {
	types map[string]InstanceType
	names []string // sorted, computed once because Names and Closest are called per plan
}

// builtin is built once: the data never changes and Catalog is immutable.
var builtin = newCatalog(builtinTypes())

func newCatalog(types map[string]InstanceType) *Catalog {
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	slices.Sort(names)
	return &Catalog{types: types, names: names}
}

// Builtin returns the catalog of built-in instance types only.
func Builtin() *Catalog { return builtin }

// New returns the built-in catalog with the provider's instance_types overrides applied.
//
// The catalog is never nil. An entry with any error is left out as a whole (a built-in type
// keeps its built-in figures), so that one bad entry does not hide the others' errors; callers
// should still refuse to proceed when errors are returned. Errors are sorted by instance type,
// then field, so messages are the same on every run.
func New(overrides map[string]Override) (*Catalog, []OverrideError) {
	types := make(map[string]InstanceType, len(builtin.types)+len(overrides))
	for n, t := range builtin.types {
		types[n] = t.clone()
	}
	var errs []OverrideError
	for name, o := range overrides {
		base, known := builtin.types[name]
		t, entryErrs := applyOverride(name, base, known, o)
		if len(entryErrs) > 0 {
			errs = append(errs, entryErrs...)
			continue
		}
		types[name] = t
	}
	slices.SortFunc(errs, func(a, b OverrideError) int {
		if c := strings.Compare(a.InstanceType, b.InstanceType); c != 0 {
			return c
		}
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Detail, b.Detail)
	})
	return newCatalog(types), errs
}

// namePattern is ml.<family>.<size>; families may carry a dash, e.g. ml.p6-b200.48xlarge.
var namePattern = regexp.MustCompile(`^ml\.[a-z0-9]+(-[a-z0-9]+)*\.[a-z0-9]+(-[a-z0-9]+)*$`)

// applyOverride merges o into base (the built-in type, when known) and checks the result.
func applyOverride(name string, base InstanceType, known bool, o Override) (InstanceType, []OverrideError) {
	m := &overrideMerge{name: name, known: known}
	if !namePattern.MatchString(name) {
		m.fail("", "instance type name must look like ml.<family>.<size> in lower case, e.g. ml.g5.12xlarge")
		// The figures are still checked so the user sees every problem in one plan.
	}

	t := base.clone()
	if !known {
		t = InstanceType{Name: name}
	}
	t.Source = SourceProvider

	m.positiveFigure("vcpu", o.VCPU, &t.VCPU)
	m.positiveFigure("memory_in_gib", o.MemoryGiB, &t.MemoryGiB)
	m.count("efa", o.EFA, &t.EFA)
	accelBad := m.count("accelerators", o.Accelerators, &t.Accelerators)
	resourceBad := m.acceleratorResource(&t, base.AcceleratorResource, o.AcceleratorResource, accelBad)
	m.migProfiles(&t, o.MIGProfiles, accelBad || resourceBad)
	return t, m.errs
}

// overrideMerge collects the errors found while merging one instance_types entry.
type overrideMerge struct {
	name  string
	known bool // the built-in catalog has the type
	errs  []OverrideError
}

func (m *overrideMerge) fail(field, format string, args ...any) {
	m.errs = append(m.errs, OverrideError{InstanceType: m.name, Field: field, Detail: fmt.Sprintf(format, args...)})
}

// positiveFigure sets *dst to *v, a finite figure above 0; v may only be unset for a
// built-in type.
func (m *overrideMerge) positiveFigure(field string, v *float64, dst *float64) {
	switch {
	case v == nil:
		if !m.known {
			m.fail(field, "required for an instance type the built-in catalog lacks")
		}
	case math.IsNaN(*v) || math.IsInf(*v, 0):
		m.fail(field, "must be a finite number, got %v", *v)
	case *v <= 0:
		// Zero would make every ratio against this type a division by zero,
		// and no instance has no CPU or memory, so it is refused for built-ins too.
		m.fail(field, "must be greater than 0, got %v", *v)
	default:
		*dst = *v
	}
}

// count sets *dst to *v when v is set and not negative, and reports whether v was refused.
func (m *overrideMerge) count(field string, v *int64, dst *int64) (refused bool) {
	if v == nil {
		return false
	}
	if *v < 0 {
		m.fail(field, "must not be negative, got %d", *v)
		return true
	}
	*dst = *v
	return false
}

// acceleratorResource sets t's accelerator resource from the override, keeping the
// invariant that a type has a resource exactly when it has accelerators, and reports
// whether the override's resource was refused. builtinResource is the built-in type's.
func (m *overrideMerge) acceleratorResource(t *InstanceType, builtinResource string, v *string, accelBad bool) (refused bool) {
	resource := t.AcceleratorResource
	if v != nil {
		resource = *v
		switch {
		case !extendedResourceName.MatchString(resource) || resource == ResourceEFA:
			// Any device plugin's name is allowed (Neuron 2.20+ registers aws.amazon.com/neuron),
			// but it must be an extended resource, not cpu, memory or the EFA interfaces.
			refused = true
			m.fail("accelerator_resource", "must be an extended resource name like %q or %q, got %q",
				ResourceNvidiaGPU, "aws.amazon.com/neuron", resource)
		case t.Accelerators == 0 && !accelBad:
			m.fail("accelerator_resource", "set, but the instance type has 0 accelerators")
		}
	}
	switch {
	case t.Accelerators == 0:
		resource = "" // keeps the invariant: no resource without accelerators
	case resource == "":
		resource = ResourceNvidiaGPU
	}
	if resource != builtinResource || t.Accelerators == 0 {
		// The marketing name belongs to the built-in device; it is unknown once that changes.
		t.AcceleratorType = ""
	}
	t.AcceleratorResource = resource
	return refused
}

// migProfiles sets t's MIG profiles from the override (nil: inherited), each valid and
// listed once. acceleratorsRefused skips the check that t has NVIDIA GPUs to partition,
// which would only repeat an error already reported.
func (m *overrideMerge) migProfiles(t *InstanceType, profiles []string, acceleratorsRefused bool) {
	if profiles == nil {
		if !t.hasNvidiaGPU() {
			// Inherited built-in profiles do not survive removing the NVIDIA GPUs they partition.
			t.MIGProfiles = nil
		}
		return
	}
	t.MIGProfiles = nil
	seen := make(map[string]bool, len(profiles))
	for _, p := range profiles {
		if _, err := MIGSlices(p); err != nil {
			hint := ""
			if _, e := MIGSlices("mig-" + p); e == nil {
				hint = fmt.Sprintf(" (did you mean %q?)", "mig-"+p)
			}
			m.fail("mig_profiles", "%v%s", err, hint)
			continue
		}
		if seen[p] {
			m.fail("mig_profiles", "MIG profile %q is listed twice", p)
			continue
		}
		seen[p] = true
		t.MIGProfiles = append(t.MIGProfiles, p)
	}
	if len(profiles) > 0 && !t.hasNvidiaGPU() && !acceleratorsRefused {
		m.fail("mig_profiles", "MIG profiles need %s accelerators, but the instance type has %d %s",
			ResourceNvidiaGPU, t.Accelerators, describeResource(t.AcceleratorResource))
	}
}

func describeResource(r string) string {
	if r == "" {
		return "accelerators"
	}
	return r
}

// Lookup returns the figures of the named type and whether it is known. The result is a copy:
// changing it does not change the catalog.
func (c *Catalog) Lookup(name string) (InstanceType, bool) {
	t, ok := c.types[name]
	if !ok {
		return InstanceType{}, false
	}
	return t.clone(), true
}

// Names returns every known instance type name, sorted. The slice is the caller's to keep.
func (c *Catalog) Names() []string {
	return slices.Clone(c.names)
}

// migPattern is the MIG profile spelling used in resource names, e.g. nvidia.com/mig-3g.20gb.
var migPattern = regexp.MustCompile(`^mig-([1-7])g\.[0-9]+gb$`)

// MIGSlices returns how many of a GPU's 7 compute slices a MIG profile uses: "mig-3g.20gb" -> 3.
func MIGSlices(profile string) (int64, error) {
	m := migPattern.FindStringSubmatch(profile)
	if m == nil {
		return 0, fmt.Errorf("MIG profile %q must look like mig-<N>g.<M>gb with N from 1 to 7, e.g. mig-1g.5gb", profile)
	}
	return int64(m[1][0] - '0'), nil
}

// extendedResourceName matches a Kubernetes extended resource: a DNS-style domain, a slash, a name.
var extendedResourceName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
