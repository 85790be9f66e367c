package quota

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// baseResources are covered by every ClusterQueue, in this order: the accelerator resources of any instance type are listed so one
// queue shape fits every type.
var baseResources = []string{ResourceCPU, ResourceMemory, catalog.ResourceNvidiaGPU, catalog.ResourceNeuronDevice, ResourceEFA}

// Kueue CRD limit on flavors per group and resources per flavor.
const maxKueueList = 64

// The Kueue values of preempt_team_tasks (preemption within the ClusterQueue) and of
// activation_state (the stop policy).
var (
	kueuePreemption = map[string]string{PreemptLowerPriority: kueue.PreemptionLowerPriority, PreemptNever: kueue.PreemptionNever}
	kueueStopPolicy = map[string]string{ActivationEnabled: kueue.StopPolicyNone, ActivationDisabled: kueue.StopPolicyHold}
)

// RenderResourceFlavor is the ResourceFlavor of an instance type: named after the type,
// selecting nodes labelled node.kubernetes.io/instance-type=<type>, marked as the provider's.
func RenderResourceFlavor(instanceType string) kueue.ResourceFlavor {
	return kueue.ResourceFlavor{
		TypeMeta: kueue.TypeMeta(kueue.KindResourceFlavor),
		ObjectMeta: metav1.ObjectMeta{
			Name:   instanceType,
			Labels: map[string]string{LabelManagedBy: ManagedByValue},
		},
		Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{LabelInstanceType: instanceType}},
	}
}

// RenderClusterQueue renders the team's ClusterQueue from a ResolvedConfig
// made by Defaults (or FromClusterQueue).
//
// Metadata: name hyperpod-ns-<team>-clusterqueue; labels app.kubernetes.io/managed-by and
// sagemaker.amazonaws.com/quota-allocation-id; annotations AnnotationName,
// AnnotationDescription (empty when there is none), AnnotationTags (when it has tags) and AnnotationConfiguration, a JSON record of the
// attributes the user configured (see configAnnotation), so that read and import can tell a
// configured value from a computed one and restore count, which the spec cannot express.
//
// Spec: one resource group covering cpu, memory, nvidia.com/gpu, aws.amazon.com/neurondevice,
// vpc.amazonaws.com/efa, then any other accelerator resource in use (a provider instance_types
// override may name one, e.g. aws.amazon.com/neuron; sorted), then the nvidia.com/mig-<profile>
// resources an entry or an absolute borrow limit uses (sorted); one flavor per entry, in config order, with every covered resource
// (0 where it does not apply). Quantities: cpu in millicores, memory in bytes exactly (whole
// numbers of bytes in binary-SI canonical form, e.g. "192Gi" or "42130Mi"; fractional ones in
// decimal, e.g. 2.9 GiB is "3113851289600m"), devices as integers.
//
// It returns an error for anything Kueue (CRD or webhook) would reject: an empty team or
// cohort, negative quotas, lendingLimit above nominalQuota, a duplicated instance type, an
// unknown strategy, or more than 64 flavors or resources. Run Validate first to get these as
// attribute-level problems.
func RenderClusterQueue(cat *catalog.Catalog, rc ResolvedConfig) (kueue.ClusterQueue, error) {
	team := rc.Config.Team
	if team == "" {
		return kueue.ClusterQueue{}, fmt.Errorf("cannot render a ClusterQueue without a team")
	}
	covered, flavors, err := renderFlavors(cat, rc)
	if err != nil {
		return kueue.ClusterQueue{}, fmt.Errorf("ClusterQueue %s: %w", ClusterQueueName(team), err)
	}
	if rc.Cohort == "" {
		// Every strategy sets borrowing or lending limits, which Kueue accepts only on a queue in a cohort.
		return kueue.ClusterQueue{}, fmt.Errorf("ClusterQueue %s: cohort is empty, but Kueue accepts borrowingLimit and lendingLimit only in a cohort", ClusterQueueName(team))
	}
	within, ok := kueuePreemption[rc.PreemptTeamTasks]
	if !ok {
		return kueue.ClusterQueue{}, fmt.Errorf("ClusterQueue %s: unknown preempt_team_tasks %q", ClusterQueueName(team), rc.PreemptTeamTasks)
	}
	stop, ok := kueueStopPolicy[rc.ActivationState]
	if !ok {
		return kueue.ClusterQueue{}, fmt.Errorf("ClusterQueue %s: unknown activation_state %q", ClusterQueueName(team), rc.ActivationState)
	}
	if rc.FairShareWeight < 0 {
		return kueue.ClusterQueue{}, fmt.Errorf("ClusterQueue %s: fair_share_weight %d is negative", ClusterQueueName(team), rc.FairShareWeight)
	}
	ann, err := encodeConfigAnnotation(rc.Config)
	if err != nil {
		return kueue.ClusterQueue{}, err
	}
	// The description annotation is written even when empty, so that server-side apply keeps
	// owning it and clearing the description removes the old text.
	annotations := map[string]string{AnnotationName: rc.Config.Name, AnnotationDescription: rc.Config.Description,
		AnnotationConfiguration: ann}
	meta := metav1.ObjectMeta{
		Name:        ClusterQueueName(team),
		Labels:      map[string]string{LabelManagedBy: ManagedByValue, LabelQuotaAllocationID: team},
		Annotations: annotations,
	}
	SetTagsAnnotation(&meta, rc.Config.Tags)
	return kueue.ClusterQueue{
		TypeMeta:   kueue.TypeMeta(kueue.KindClusterQueue),
		ObjectMeta: meta,
		Spec: kueue.ClusterQueueSpec{
			ResourceGroups:    []kueue.ResourceGroup{{CoveredResources: covered, Flavors: flavors}},
			CohortName:        rc.Cohort,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelQuotaAllocationID: team}},
			Preemption: &kueue.ClusterQueuePreemption{
				ReclaimWithinCohort: kueue.PreemptionAny,
				BorrowWithinCohort:  &kueue.BorrowWithinCohort{Policy: kueue.PreemptionNever},
				WithinClusterQueue:  within,
			},
			StopPolicy:  &stop,
			FairSharing: &kueue.FairSharing{Weight: resource.NewQuantity(rc.FairShareWeight, resource.DecimalSI)},
		},
	}, nil
}

// accelResource returns the accelerator resource of a resolved entry.
func accelResource(cat *catalog.Catalog, r Resolved) (string, error) {
	res := r.AcceleratorResource
	if res == "" && r.Accelerators != 0 {
		if it, ok := cat.Lookup(r.Configured.InstanceType); ok {
			res = it.AcceleratorResource
		}
		if res == "" {
			return "", fmt.Errorf("flavor %s: accelerators = %d, but the instance type has no accelerator resource", r.Configured.InstanceType, r.Accelerators)
		}
	}
	if res == ResourceCPU || res == ResourceMemory || res == ResourceEFA {
		return "", fmt.Errorf("flavor %s: %q cannot be an accelerator resource", r.Configured.InstanceType, res)
	}
	return res, nil
}

// coveredResources returns the group's resources in design order for the given accelerator and
// partition resources.
func coveredResources(extra []string) []string {
	var accel, mig []string
	for _, r := range extra {
		switch {
		case slices.Contains(baseResources, r):
		case strings.HasPrefix(r, MIGResourcePrefix+"mig-"):
			mig = append(mig, r)
		default:
			accel = append(accel, r)
		}
	}
	slices.Sort(accel)
	slices.Sort(mig)
	out := slices.Clone(baseResources)
	out = append(out, slices.Compact(accel)...)
	return append(out, slices.Compact(mig)...)
}

// renderFlavors renders the single resource group.
func renderFlavors(cat *catalog.Catalog, rc ResolvedConfig) ([]corev1.ResourceName, []kueue.FlavorQuotas, error) {
	abs, percent, err := sharingLimits(rc)
	if err != nil {
		return nil, nil, err
	}
	accel, covered, err := flavorColumns(cat, rc, abs)
	if err != nil {
		return nil, nil, err
	}
	flavors := make([]kueue.FlavorQuotas, len(rc.Resources))
	for i, r := range rc.Resources {
		var caps map[string]*big.Rat
		if limit, ok := abs[r.Configured.InstanceType]; ok {
			if caps, err = borrowCaps(cat, limit, accel[i]); err != nil {
				return nil, nil, err
			}
		}
		if flavors[i], err = renderFlavor(r, accel[i], covered, caps, rc.Strategy, percent); err != nil {
			return nil, nil, err
		}
	}
	names := make([]corev1.ResourceName, len(covered))
	for i, c := range covered {
		names[i] = corev1.ResourceName(c)
	}
	return names, flavors, nil
}

// flavorColumns checks the entries and returns the accelerator resource of each and the
// resources the group covers: those of the entries and the MIG resources of the absolute
// borrow limits abs, which a team may borrow without a quota of its own in them.
func flavorColumns(cat *catalog.Catalog, rc ResolvedConfig, abs map[string]AbsoluteBorrowLimit) (accel, covered []string, err error) {
	if len(rc.Resources) > maxKueueList {
		return nil, nil, fmt.Errorf("%d instance types, but Kueue allows at most %d flavors", len(rc.Resources), maxKueueList)
	}
	accel = make([]string, len(rc.Resources))
	var extra []string
	seen := map[string]bool{}
	for i, r := range rc.Resources {
		if r.Unknown {
			return nil, nil, fmt.Errorf("resources[%d] is not resolved (unknown values)", i)
		}
		name := r.Configured.InstanceType
		if seen[name] {
			return nil, nil, fmt.Errorf("instance type %s is listed twice; Kueue allows a flavor once per ClusterQueue", name)
		}
		seen[name] = true
		res, err := accelResource(cat, r)
		if err != nil {
			return nil, nil, err
		}
		accel[i] = res
		if res != "" {
			extra = append(extra, res)
		}
		if p := r.Configured.Partition; p != nil {
			if !validProfile(p.Type) {
				return nil, nil, fmt.Errorf("flavor %s: %q is not a MIG profile", name, p.Type)
			}
			extra = append(extra, MIGResourceName(p.Type))
		}
		if p := abs[name].Partition; p != nil {
			if !validProfile(p.Type) {
				return nil, nil, fmt.Errorf("flavor %s: absolute borrow limit: %q is not a MIG profile", name, p.Type)
			}
			extra = append(extra, MIGResourceName(p.Type))
		}
	}
	covered = coveredResources(extra)
	if len(covered) > maxKueueList {
		return nil, nil, fmt.Errorf("%d resources, but Kueue allows at most %d per resource group", len(covered), maxKueueList)
	}
	return accel, covered, nil
}

// sharingLimits returns the absolute borrow limits by instance type and the borrowing
// percentage as a fraction (0 for a strategy that does not borrow).
func sharingLimits(rc ResolvedConfig) (map[string]AbsoluteBorrowLimit, *big.Rat, error) {
	abs := map[string]AbsoluteBorrowLimit{}
	if rc.Strategy == StrategyLendAndBorrow {
		for _, a := range rc.AbsoluteBorrowLimits {
			if _, dup := abs[a.InstanceType]; dup {
				return nil, nil, fmt.Errorf("absolute borrow limits for %s are given twice", a.InstanceType)
			}
			if !slices.ContainsFunc(rc.Resources, func(r Resolved) bool { return r.Configured.InstanceType == a.InstanceType }) {
				return nil, nil, fmt.Errorf("absolute borrow limit for %s, which has no quota in this ClusterQueue", a.InstanceType)
			}
			abs[a.InstanceType] = a
		}
	}
	percent := new(big.Rat)
	switch rc.Strategy {
	case StrategyLendAndBorrow:
		bl := DefaultBorrowLimit
		if rc.BorrowLimit != nil {
			bl = *rc.BorrowLimit
		}
		if bl < 0 {
			return nil, nil, fmt.Errorf("borrow_limit %d is negative", bl)
		}
		percent.SetFrac64(bl, 100)
	case StrategyLend, StrategyDontLend:
	default:
		return nil, nil, fmt.Errorf("unknown resource sharing strategy %q", rc.Strategy)
	}
	return abs, percent, nil
}

// borrowCaps are the borrowing limits an absolute_borrow_limits element sets, by resource, in
// the resource's units (cores, bytes, devices). Count gives every resource of the instance type
// count x one instance's amount (its accelerators in column accel, cpu, memory and EFA, as a
// resources entry's count does); accelerators, vcpu and memory_in_gib replace the amount of
// their resource (the explicit value wins); a partition caps the MIG resource of its profile at
// its count. Resources it does not cap keep the percentage.
func borrowCaps(cat *catalog.Catalog, a AbsoluteBorrowLimit, accel string) (map[string]*big.Rat, error) {
	name := a.InstanceType
	caps := map[string]*big.Rat{}
	if a.Count != nil {
		it, ok := cat.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("flavor %s: absolute borrow limit by count, but the instance type is unknown", name)
		}
		n := ratInt(*a.Count)
		caps[ResourceCPU] = floorTo(new(big.Rat).Mul(n, orZero(DecimalFromFloat(it.VCPU))), 1000)
		caps[ResourceMemory] = gibToBytes(floorTo(new(big.Rat).Mul(n, orZero(DecimalFromFloat(it.MemoryGiB))), 1024))
		caps[ResourceEFA] = new(big.Rat).Mul(n, ratInt(it.EFA))
		if accel != "" {
			caps[accel] = new(big.Rat).Mul(n, ratInt(it.Accelerators))
		}
	}
	if a.VCPU != nil {
		caps[ResourceCPU] = a.VCPU
	}
	if a.MemoryGiB != nil {
		caps[ResourceMemory] = gibToBytes(a.MemoryGiB)
	}
	if a.Accelerators != nil {
		switch {
		case accel != "":
			caps[accel] = ratInt(*a.Accelerators)
		case *a.Accelerators != 0:
			return nil, fmt.Errorf("flavor %s: absolute borrow limit for accelerators, but the instance type has no accelerators", name)
		}
	}
	if p := a.Partition; p != nil {
		caps[MIGResourceName(p.Type)] = ratInt(p.Count)
	}
	return caps, nil
}

// renderFlavor renders one entry's flavor: a quota for every covered resource, with the
// accelerators in the accel column, and the borrowing limits caps sets (nil: none).
func renderFlavor(r Resolved, accel string, covered []string, caps map[string]*big.Rat, strategy string, percent *big.Rat) (kueue.FlavorQuotas, error) {
	name := r.Configured.InstanceType
	nominal := map[string]*big.Rat{
		ResourceCPU:    r.VCPU,
		ResourceMemory: gibToBytes(orZero(r.MemoryGiB)),
		ResourceEFA:    ratInt(r.EFA),
	}
	if r.VCPU == nil {
		nominal[ResourceCPU] = new(big.Rat)
	}
	if accel != "" {
		nominal[accel] = ratInt(r.Accelerators)
	}
	if p := r.Configured.Partition; p != nil {
		nominal[MIGResourceName(p.Type)] = ratInt(p.Count)
	}
	fq := kueue.FlavorQuotas{Name: name, Resources: make([]kueue.ResourceQuota, len(covered))}
	for j, res := range covered {
		rq, err := renderResourceQuota(name, res, orZero(nominal[res]), caps[res], strategy, percent)
		if err != nil {
			return kueue.FlavorQuotas{}, err
		}
		fq.Resources[j] = rq
	}
	return fq, nil
}

// renderResourceQuota is one resource of a flavor: its nominal quota n, and a borrowing limit
// of limit when set, else n x percent rounded down to the resource's unit (0 for a strategy
// that does not borrow).
func renderResourceQuota(flavor, res string, n, limit *big.Rat, strategy string, percent *big.Rat) (kueue.ResourceQuota, error) {
	if n.Sign() < 0 {
		return kueue.ResourceQuota{}, fmt.Errorf("flavor %s: %s quota %s is negative", flavor, res, RatString(n))
	}
	q, err := quantityFor(res, n)
	if err != nil {
		return kueue.ResourceQuota{}, fmt.Errorf("flavor %s: nominal %s: %w", flavor, res, err)
	}
	rq := kueue.ResourceQuota{Name: corev1.ResourceName(res), NominalQuota: q}
	var borrow *big.Rat
	switch {
	case strategy != StrategyLendAndBorrow:
		borrow = new(big.Rat)
	case limit != nil:
		borrow = limit
	default:
		unit := unitOf(res)
		units := floorInt(new(big.Rat).Quo(new(big.Rat).Mul(n, percent), unit))
		borrow = new(big.Rat).Mul(new(big.Rat).SetInt(units), unit)
	}
	if borrow.Sign() < 0 {
		return kueue.ResourceQuota{}, fmt.Errorf("flavor %s: %s borrowing limit %s is negative", flavor, res, RatString(borrow))
	}
	bq, err := quantityFor(res, borrow)
	if err != nil {
		return kueue.ResourceQuota{}, fmt.Errorf("flavor %s: borrowing limit %s: %w", flavor, res, err)
	}
	rq.BorrowingLimit = &bq
	if strategy == StrategyDontLend {
		lend := new(big.Rat) // 0 <= nominal always: the webhook's lendingLimit <= nominalQuota holds
		lq, _ := quantityFor(res, lend)
		rq.LendingLimit = &lq
	}
	return rq, nil
}
