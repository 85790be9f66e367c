package quota

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// Validate returns every plan-time error of cfg; none needs the cluster.
//
// Unknown values: mark them with Config.MarkUnknown and leave the field nil/zero. A check that
// needs an unknown value is skipped (an entry whose instance_type is unknown is checked only for
// what does not depend on its type; an unknown attribute counts as "maybe set" for the "none
// set" check and as unset for conflicts), so Validate never reports a problem that a later
// value could make go away. Call it again at apply time, when everything is known.
func Validate(cat *catalog.Catalog, cfg Config) []Problem {
	v := validator{cat: cat, cfg: cfg}
	v.root()
	v.sharing()
	if !cfg.IsUnknown("resources") {
		v.resources()
	}
	return v.problems
}

type validator struct {
	cat *catalog.Catalog
	cfg Config
	problemList
}

func (v *validator) root() {
	c := v.cfg
	if !c.IsUnknown("name") {
		switch {
		case c.Name == "":
			v.add(-1, []string{"name"}, "Missing quota name",
				"name is empty. Set name to 1-63 letters, digits and hyphens, starting and ending with a letter or digit, e.g. name = \"ml-team-a\".")
		case len(c.Name) > MaxNameLength || !NamePattern.MatchString(c.Name):
			v.add(-1, []string{"name"}, "Invalid quota name",
				"name %q %s. Remove other characters, e.g. name = %q.", c.Name, NameRule, suggestName(c.Name))
		}
	}
	if !c.IsUnknown("description") && len(c.Description) > MaxDescriptionLength {
		v.add(-1, []string{"description"}, "Description too long",
			"description has %d characters; shorten it to at most %d.", len(c.Description), MaxDescriptionLength)
	}
	if !c.IsUnknown("team") {
		switch {
		case c.Team == "":
			v.add(-1, []string{"team"}, "Missing team",
				"team is empty. Set it to the team name: lower-case letters, digits and hyphens, at most %d characters, e.g. team = \"research\".", MaxTeamLength)
		case !ValidTeam(c.Team):
			v.add(-1, []string{"team"}, "Invalid team name",
				"team %q %s. Change it to match (at most %d characters), e.g. team = %q.", c.Team, TeamRule, MaxTeamLength, suggestTeam(c.Team))
		}
	}
	v.enum(c.ActivationState, "activation_state", ActivationEnabled, ActivationDisabled)
	v.enum(c.PreemptTeamTasks, "preempt_team_tasks", PreemptLowerPriority, PreemptNever)
	if c.Cohort != nil && !c.IsUnknown("cohort") {
		switch {
		case *c.Cohort == "":
			v.add(-1, []string{"cohort"}, "Empty cohort",
				"cohort is an empty string, but Kueue accepts borrowing and lending limits only on a ClusterQueue in a cohort, and every resource_sharing strategy sets them. Remove the cohort attribute to use %q, or name a cohort.", DefaultCohort)
		case len(*c.Cohort) > 253 || !cohortPattern.MatchString(*c.Cohort):
			v.add(-1, []string{"cohort"}, "Invalid cohort name",
				"cohort %q must be a DNS subdomain: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters, e.g. cohort = %q.", *c.Cohort, DefaultCohort)
		}
	}
	if !c.IsUnknown("fair_share_weight") && (c.FairShareWeight < 0 || c.FairShareWeight > MaxFairShareWeight) {
		v.add(-1, []string{"fair_share_weight"}, "fair_share_weight out of range",
			"fair_share_weight is %d; set it to a whole number from 0 (lowest) to %d.", c.FairShareWeight, MaxFairShareWeight)
	}
}

func (v *validator) enum(val *string, attr string, allowed ...string) {
	v.enumAt(val, []string{attr}, allowed...)
}

func (v *validator) enumAt(val *string, path []string, allowed ...string) {
	if val == nil || v.cfg.IsUnknown(path...) || slices.Contains(allowed, *val) {
		return
	}
	attr := path[len(path)-1]
	v.add(-1, path, "Invalid "+attr,
		"%s %q is not one of %s. Use one of those values (they are case-sensitive) or remove %s to use the default %q.",
		attr, *val, quoteList(allowed, "or"), attr, allowed[0])
}

func (v *validator) sharing() {
	c := v.cfg
	s := c.Sharing
	v.enumAt(s.Strategy, []string{"resource_sharing", "strategy"}, StrategyLendAndBorrow, StrategyLend, StrategyDontLend)
	strategy := DefaultStrategy
	if s.Strategy != nil {
		strategy = *s.Strategy
	}
	// nonBorrowing is true only when the strategy is known, valid and does not borrow.
	nonBorrowing := !c.IsUnknown("resource_sharing", "strategy") && (strategy == StrategyLend || strategy == StrategyDontLend)

	if s.BorrowLimit != nil && !c.IsUnknown("resource_sharing", "borrow_limit") {
		bl := *s.BorrowLimit
		if nonBorrowing {
			v.add(-1, []string{"resource_sharing", "borrow_limit"}, "borrow_limit needs a strategy that borrows",
				"borrow_limit = %d is set, but strategy %q never borrows (the ClusterQueue gets borrowingLimit 0). Remove borrow_limit, or set strategy = %q.",
				bl, strategy, StrategyLendAndBorrow)
		}
		if bl < 0 || bl > MaxBorrowLimit {
			v.add(-1, []string{"resource_sharing", "borrow_limit"}, "borrow_limit out of range",
				"borrow_limit is %d; set it to a percentage of the nominal quota from 0 to %d (100 lets the team borrow as much again as it owns).", bl, MaxBorrowLimit)
		}
	}

	if c.IsUnknown("resource_sharing", "absolute_borrow_limits") {
		return
	}
	if len(s.AbsoluteBorrowLimits) > 0 && nonBorrowing {
		v.add(-1, []string{"resource_sharing", "absolute_borrow_limits"}, "absolute_borrow_limits needs a strategy that borrows",
			"absolute_borrow_limits is set, but strategy %q never borrows (the ClusterQueue gets borrowingLimit 0). Remove absolute_borrow_limits, or set strategy = %q.",
			strategy, StrategyLendAndBorrow)
	}

	// Which instance types resources has, when all of them are known.
	inResources := map[string]bool{}
	allKnown := !c.IsUnknown("resources")
	for i, e := range c.Resources {
		if c.IsUnknown("resources", strconv.Itoa(i), "instance_type") {
			allKnown = false
		}
		inResources[e.InstanceType] = true
	}
	seen := map[string]int{}
	for j, a := range s.AbsoluteBorrowLimits {
		v.absoluteLimit(j, a, seen, inResources, allKnown)
	}
}

// absoluteLimit checks element j of absolute_borrow_limits: the rules of a resources entry
// (sizeCheck) plus its own: an instance type of resources, once, and at least one amount set.
// seen holds the instance types of the elements before it; inResources those of resources,
// which are complete when allKnown.
func (v *validator) absoluteLimit(j int, a AbsoluteBorrowLimit, seen map[string]int, inResources map[string]bool, allKnown bool) {
	base := []string{"resource_sharing", "absolute_borrow_limits", strconv.Itoa(j)}
	if v.cfg.IsUnknown(base...) {
		return
	}
	c := sizeCheck{validator: v, e: a.entry(), entry: -1, rel: base, at: base}
	if !c.unk("instance_type") {
		prev, dup := seen[a.InstanceType]
		it, known := v.cat.Lookup(a.InstanceType)
		switch {
		case a.InstanceType == "":
			c.report([]string{"instance_type"}, "Missing instance_type",
				"absolute_borrow_limits[%d] has no instance_type. Set it to one of the instance types in resources.", j)
		case dup:
			c.report([]string{"instance_type"}, "Duplicate absolute borrow limit",
				"instance type %q has absolute borrow limits in both absolute_borrow_limits[%d] and [%d]. Merge them into one element.", a.InstanceType, prev, j)
		case c.unk("capacity"):
			// The type's figures come from a provider setting not known yet.
		case !known && !inResources[a.InstanceType]:
			// A type in resources is reported there.
			c.push(unknownTypeProblem(v.cat, -1, a.InstanceType))
		case allKnown && !inResources[a.InstanceType]:
			c.report([]string{"instance_type"}, "Absolute borrow limit for an instance type without quota",
				"absolute_borrow_limits[%d] names %q, which is not in resources, so there is no quota to borrow against. Add %q to resources or remove this limit.",
				j, a.InstanceType, a.InstanceType)
		default:
			c.it, c.haveType = it, known
		}
		if a.InstanceType != "" && !dup {
			seen[a.InstanceType] = j
		}
	}
	if !c.maybe(a.Count != nil, "count") && !c.maybe(a.Accelerators != nil, "accelerators") && !c.maybe(a.Partition != nil, "accelerator_partition") &&
		!c.maybe(a.VCPU != nil, "vcpu") && !c.maybe(a.MemoryGiB != nil, "memory_in_gib") {
		c.report(nil, "Empty absolute borrow limit",
			"absolute_borrow_limits[%d] sets none of count, accelerators, accelerator_partition, vcpu, memory_in_gib, so it limits nothing. Set at least one of them, or remove the element.", j)
	}
	c.conflicts()
	c.amounts()
	if c.known(a.Partition != nil, "accelerator_partition") {
		c.partition()
	}
}

// entry is the limit's attributes in the shape of a resources entry, for the checks both share.
func (a AbsoluteBorrowLimit) entry() Entry {
	return Entry{InstanceType: a.InstanceType, Count: a.Count, Accelerators: a.Accelerators, VCPU: a.VCPU, MemoryGiB: a.MemoryGiB, Partition: a.Partition}
}

func (v *validator) resources() {
	c := v.cfg
	switch n := len(c.Resources); {
	case n == 0:
		v.add(-1, []string{"resources"}, "No resources",
			"resources is empty, so the team would get no quota at all. Add at least one entry, e.g. resources = [{ instance_type = \"ml.g5.12xlarge\", count = 1 }].")
	case n > MaxResources:
		v.add(-1, []string{"resources"}, "Too many resources",
			"resources has %d entries; a compute quota allows at most %d instance types. Split the quota, or drop the entries you need least.", n, MaxResources)
	}
	seen := map[string]int{}
	for i, e := range c.Resources {
		if c.IsUnknown("resources", strconv.Itoa(i)) {
			continue
		}
		v.entry(i, e, seen)
	}
}

func (v *validator) entry(i int, e Entry, seen map[string]int) {
	c := sizeCheck{validator: v, e: e, entry: i, at: []string{"resources", strconv.Itoa(i)}}
	c.instanceType(seen)
	c.size()
	c.conflicts()
	c.amounts()
	if c.known(e.Partition != nil, "accelerator_partition") {
		c.partition()
	}
}

// sizeCheck checks one element with the attributes a resources entry and an
// absolute_borrow_limits element share (count, accelerators, accelerator_partition, vcpu,
// memory_in_gib; efa only in resources), so both follow one set of rules.
type sizeCheck struct {
	*validator
	e Entry
	// entry is Problem.Entry (the resources index, or -1 for a borrow limit), rel the path of
	// the element below it, and at its path from the root, where its unknown values are marked.
	entry   int
	rel, at []string
	// it is the element's instance type when haveType: known, and its capacity too.
	it       catalog.InstanceType
	haveType bool
}

func (c *sizeCheck) unk(attr ...string) bool {
	return c.cfg.IsUnknown(append(slices.Clone(c.at), attr...)...)
}

// known reports whether an attribute is set and known; maybe whether it is set or unknown.
func (c *sizeCheck) known(isSet bool, attr ...string) bool { return isSet && !c.unk(attr...) }
func (c *sizeCheck) maybe(isSet bool, attr ...string) bool { return isSet || c.unk(attr...) }

// report adds a problem at attr of the element; push adds one made for a resources entry.
func (c *sizeCheck) report(attr []string, summary, format string, args ...any) {
	c.add(c.entry, c.pathOf(attr...), summary, format, args...)
}

func (c *sizeCheck) push(p Problem) {
	p.Entry, p.Path = c.entry, c.pathOf(p.Path...)
	c.problems = append(c.problems, p)
}

func (c *sizeCheck) instanceType(seen map[string]int) {
	i, e := c.entry, c.e
	if c.unk("instance_type") {
		return
	}
	switch prev, dup := seen[e.InstanceType]; {
	case e.InstanceType == "":
		c.report([]string{"instance_type"}, "Missing instance_type",
			"this entry has no instance_type. Set it to an instance type such as \"ml.g5.12xlarge\".")
	case dup:
		c.report([]string{"instance_type"}, "Duplicate instance type",
			"instance type %q appears in resources[%d] and resources[%d]; each instance type may appear once. Merge the two entries into one.", e.InstanceType, prev, i)
	default:
		seen[e.InstanceType] = i
		var ok bool
		if c.unk("capacity") {
			// The type's figures come from a provider setting not known yet.
		} else if c.it, ok = c.cat.Lookup(e.InstanceType); ok {
			c.haveType = true
		} else {
			c.push(unknownTypeProblem(c.cat, i, e.InstanceType))
		}
	}
}

// size checks that something sizes a resources entry.
func (c *sizeCheck) size() {
	e, it := c.e, c.it
	othersUnset := !c.maybe(e.Count != nil, "count") && !c.maybe(e.Partition != nil, "accelerator_partition") &&
		!c.maybe(e.VCPU != nil, "vcpu") && !c.maybe(e.MemoryGiB != nil, "memory_in_gib")
	if othersUnset && !c.maybe(e.Accelerators != nil, "accelerators") {
		c.push(noSizeProblem(c.entry))
	}
	if c.haveType && it.Accelerators == 0 && c.known(e.Accelerators != nil, "accelerators") && othersUnset {
		c.push(acceleratorsCannotSizeProblem(c.entry, it))
	}
}

// conflicts checks that no two sizing attributes conflict.
func (c *sizeCheck) conflicts() {
	e := c.e
	countSet := c.known(e.Count != nil, "count")
	accSet := c.known(e.Accelerators != nil, "accelerators")
	partSet := c.known(e.Partition != nil, "accelerator_partition")
	if countSet && accSet {
		c.report([]string{"accelerators"}, "Conflicting attributes",
			"count and accelerators are both set; count already sets the accelerators (count x the accelerators of one instance). Remove one of them: keep count for whole instances, or accelerators for a share of them.")
	}
	if countSet && partSet {
		c.report([]string{"accelerator_partition"}, "Conflicting attributes",
			"count and accelerator_partition are both set; count allocates whole instances, accelerator_partition allocates GPU partitions. Remove one of them.")
	}
	if accSet && partSet {
		c.report([]string{"accelerator_partition"}, "Conflicting attributes",
			"accelerators and accelerator_partition are both set; a quota entry allocates either whole accelerators or MIG partitions of them. Remove one of them (use two quotas for different teams if you need both).")
	}
}

// amounts checks the range and precision of each configured amount.
func (c *sizeCheck) amounts() {
	e, it := c.e, c.it
	if c.known(e.Count != nil, "count") {
		c.checkInt(c.entry, c.pathOf("count"), *e.Count)
	}
	if c.known(e.Accelerators != nil, "accelerators") {
		c.checkInt(c.entry, c.pathOf("accelerators"), *e.Accelerators)
		if c.haveType && it.Accelerators == 0 && *e.Accelerators > 0 {
			c.report([]string{"accelerators"}, "Instance type has no accelerators",
				"accelerators = %d, but %s has no accelerators. Remove accelerators (or set it to 0) and use count, vcpu or memory_in_gib instead, or choose an instance type with accelerators.",
				*e.Accelerators, it.Name)
		}
	}
	if c.known(e.EFA != nil, "efa") {
		c.checkInt(c.entry, c.pathOf("efa"), *e.EFA)
	}
	if c.known(e.VCPU != nil, "vcpu") {
		c.checkVCPU(c.entry, c.pathOf("vcpu"), e.VCPU)
	}
	if c.known(e.MemoryGiB != nil, "memory_in_gib") {
		c.checkMemory(c.entry, c.pathOf("memory_in_gib"), e.MemoryGiB)
	}
}

// pathOf is the problem path of an attribute of the element.
func (c *sizeCheck) pathOf(attr ...string) []string { return append(slices.Clone(c.rel), attr...) }

// partition checks a configured accelerator_partition against the instance type.
func (c *sizeCheck) partition() {
	i, p, it := c.entry, c.e.Partition, c.it
	if !c.unk("accelerator_partition", "count") {
		c.checkInt(i, c.pathOf("accelerator_partition", "count"), p.Count)
	}
	switch {
	case c.haveType && it.Accelerators == 0:
		c.push(partitionNoAcceleratorsProblem(i, it))
	case c.unk("accelerator_partition", "type"):
	case !validProfile(p.Type):
		c.push(badProfileProblem(i, p.Type, it))
	case !c.haveType:
	case it.AcceleratorResource != catalog.ResourceNvidiaGPU:
		c.report([]string{"accelerator_partition"}, "Partitions need NVIDIA GPUs",
			"accelerator_partition uses MIG, which only NVIDIA GPUs offer, but %s has %s accelerators. Remove accelerator_partition and use accelerators or count instead.",
			it.Name, describeAccelerator(it))
	case !slices.Contains(it.MIGProfiles, p.Type):
		if len(it.MIGProfiles) == 0 {
			c.report([]string{"accelerator_partition", "type"}, "No MIG profiles on this instance type",
				"%s offers no MIG profiles, so %q cannot be allocated. Remove accelerator_partition and use accelerators or count, or list the profile in the provider's instance_types mig_profiles if the nodes are partitioned.",
				it.Name, p.Type)
		} else {
			c.report([]string{"accelerator_partition", "type"}, "MIG profile not offered",
				"%s does not offer MIG profile %q. Use one of %s.", it.Name, p.Type, quoteList(it.MIGProfiles, "or"))
		}
	}
}

// validateEntries runs the checks of each resources entry, and none outside resources.
func validateEntries(cat *catalog.Catalog, cfg Config) []Problem {
	v := validator{cat: cat, cfg: cfg}
	seen := map[string]int{}
	for i, e := range cfg.Resources {
		v.entry(i, e, seen)
	}
	return v.problems
}

func validProfile(p string) bool {
	_, err := catalog.MIGSlices(p)
	return err == nil
}

func (v *validator) checkInt(entry int, path []string, n int64) {
	attr := path[len(path)-1]
	switch {
	case n < 0:
		v.add(entry, path, "Negative value", "%s is %d; it must be 0 or more. Set a non-negative whole number.", attr, n)
	case n > MaxAmount:
		v.add(entry, path, "Value too large", "%s is %d; the largest allowed value is %d. Set a smaller number.", attr, n, MaxAmount)
	}
}

func (v *validator) checkRat(entry int, path []string, r *big.Rat) bool {
	attr := path[len(path)-1]
	switch {
	case r.Sign() < 0:
		v.add(entry, path, "Negative value", "%s is %s; it must be 0 or more. Set a non-negative number.", attr, RatString(r))
		return false
	case r.Cmp(ratInt(MaxAmount)) > 0:
		v.add(entry, path, "Value too large", "%s is %s; the largest allowed value is %d. Set a smaller number.", attr, RatString(r), MaxAmount)
		return false
	}
	return true
}

func (v *validator) checkVCPU(entry int, path []string, r *big.Rat) {
	if !v.checkRat(entry, path, r) {
		return
	}
	if !new(big.Rat).Mul(r, ratInt(1000)).IsInt() {
		v.add(entry, path, "Too many decimal places",
			"%s = %s cannot be expressed in millicores, the unit Kubernetes counts CPU in. Use at most 3 decimal places, e.g. %s.",
			path[len(path)-1], RatString(r), RatString(floorTo(r, 1000)))
	}
}

func (v *validator) checkMemory(entry int, path []string, r *big.Rat) {
	if !v.checkRat(entry, path, r) {
		return
	}
	if !memoryRepresentable(r) {
		v.add(entry, path, "Too many decimal places",
			"%s = %s GiB is not a whole number of nanobytes, the finest amount a Kubernetes quantity holds, so it could not be stored exactly. Use at most 9 decimal places, e.g. %s.",
			path[len(path)-1], RatString(r), RatString(floorTo(r, 1000)))
	}
}

func unknownTypeProblem(cat *catalog.Catalog, i int, name string) Problem {
	return Problem{Entry: i, Path: []string{"instance_type"}, Summary: "Unknown instance type",
		Detail: UnknownInstanceTypeDetail(cat, name)}
}

// UnknownInstanceTypeDetail explains that name is not a known instance type, names the closest
// known ones, and shows how to describe a new type. The data source reuses it.
func UnknownInstanceTypeDetail(cat *catalog.Catalog, name string) string {
	hint := ""
	if c := cat.Closest(name, 3); len(c) > 0 {
		hint = " Did you mean " + quoteList(c, "or") + "?"
	}
	return fmt.Sprintf("instance type %q is neither in the built-in catalog nor in the provider's instance_types.%s "+
		"If the type is right but new, describe one instance of it in the provider block: "+
		"instance_types = { %q = { accelerators = ..., vcpu = ..., memory_in_gib = ..., efa = ... } }.", name, hint, name)
}

func noSizeProblem(i int) Problem {
	return Problem{Entry: i, Summary: "No quota size",
		Detail: "none of count, accelerators, vcpu, memory_in_gib and accelerator_partition is set, so the size of this entry is unknown. " +
			"Set one of them, e.g. count = 1 for one whole instance; the others are computed from it."}
}

func acceleratorsCannotSizeProblem(i int, it catalog.InstanceType) Problem {
	return Problem{Entry: i, Path: []string{"accelerators"}, Summary: "No quota size",
		Detail: fmt.Sprintf("%s has no accelerators, so accelerators cannot size this entry and nothing else does. "+
			"Set count, vcpu or memory_in_gib instead (e.g. count = 1 for one whole instance), and remove accelerators.", it.Name)}
}

func partitionNoAcceleratorsProblem(i int, it catalog.InstanceType) Problem {
	return Problem{Entry: i, Path: []string{"accelerator_partition"}, Summary: "Instance type has no accelerators",
		Detail: fmt.Sprintf("accelerator_partition is set, but %s has no accelerators to partition. "+
			"Remove accelerator_partition, or choose a GPU instance type that offers MIG profiles (e.g. ml.p4d.24xlarge).", it.Name)}
}

func badProfileProblem(i int, profile string, it catalog.InstanceType) Problem {
	_, err := catalog.MIGSlices(profile)
	fix := "Use a profile like \"mig-1g.5gb\""
	if len(it.MIGProfiles) > 0 {
		fix = "Use one of the profiles of " + it.Name + ": " + quoteList(it.MIGProfiles, "or")
	}
	if validProfile("mig-" + profile) {
		fix = fmt.Sprintf("Write it with the mig- prefix: %q", "mig-"+profile)
	}
	msg := fmt.Sprintf("%q is not a MIG profile", profile)
	if err != nil {
		msg = err.Error()
	}
	return Problem{Entry: i, Path: []string{"accelerator_partition", "type"}, Summary: "Invalid MIG profile",
		Detail: msg + ". " + fix + "."}
}

func describeAccelerator(it catalog.InstanceType) string {
	if it.AcceleratorType != "" {
		return it.AcceleratorType + " (" + it.AcceleratorResource + ")"
	}
	return it.AcceleratorResource
}

// UnknownBuiltinTypeDetail explains that name is not in cat, for callers that see only the
// built-in catalog (provider functions get no provider configuration): it names the closest
// known types, lists every known one by family, and says where types of the provider's
// instance_types can be looked up instead.
func UnknownBuiltinTypeDetail(cat *catalog.Catalog, name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "instance type %q is not in the provider's built-in catalog.", name)
	if c := cat.Closest(name, 3); len(c) > 0 {
		b.WriteString(" Did you mean " + quoteList(c, "or") + "?")
	}
	b.WriteString(" Known types, by family: " + cat.NamesByFamily() + ".")
	b.WriteString(" Provider functions cannot see the provider's instance_types setting; for a type defined there, " +
		"read its figures with the hyperpod_instance_type_capacity data source instead.")
	return b.String()
}
