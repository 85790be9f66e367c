package quota

import "github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"

// Plan is the plan-time pipeline of a quota: Validate, then Defaults, then CheckRanges. It
// stops at the first step that reports problems and returns them; otherwise it returns the
// resolved configuration. The resource's plan and apply both run it, so they fail alike.
func Plan(cat *catalog.Catalog, cfg Config) (ResolvedConfig, []Problem) {
	return PlanOn(cat, cfg, StoreLimits{})
}

// PlanOn is Plan for a store with limits: the computed amounts are ones the store holds
// exactly (on a store of 32-bit floats, each rounded down to the nearest value a float32 holds
// and reads back as), and CheckStore runs last. The plan's numbers are then the ones the store
// keeps and hands back, so the plan after an apply is empty.
func PlanOn(cat *catalog.Catalog, cfg Config, limits StoreLimits) (ResolvedConfig, []Problem) {
	rc, problems := runPlan(cat, cfg, Validate, limits.amountFloor())
	if len(problems) > 0 {
		return rc, problems
	}
	if problems := CheckStore(cfg, rc, limits); len(problems) > 0 {
		return ResolvedConfig{}, problems
	}
	return rc, nil
}

// PlanEntry runs the pipeline of Plan on one resources entry on its own, for the
// quota_defaults provider function: a lone entry has no name, team or siblings to check, so
// only the entry checks run. It fails exactly when the plan of a quota with that entry fails
// in the entry. Problems carry Entry 0. Its amounts are those of the Kubernetes path.
func PlanEntry(cat *catalog.Catalog, e Entry) (Resolved, []Problem) {
	rc, problems := runPlan(cat, Config{Resources: []Entry{e}}, validateEntries, floorExact)
	if len(problems) > 0 {
		return Resolved{}, problems
	}
	return rc.Resources[0], nil
}

func runPlan(cat *catalog.Catalog, cfg Config, validate func(*catalog.Catalog, Config) []Problem, floor amountFloor) (ResolvedConfig, []Problem) {
	if problems := validate(cat, cfg); len(problems) > 0 {
		return ResolvedConfig{}, problems
	}
	rc := defaults(cat, cfg, floor)
	if problems := CheckRanges(rc); len(problems) > 0 {
		return ResolvedConfig{}, problems
	}
	return rc, nil
}
