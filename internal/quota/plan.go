package quota

import "github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"

// Plan is the plan-time pipeline of a quota: Validate, then Defaults, then CheckRanges. It
// stops at the first step that reports problems and returns them; otherwise it returns the
// resolved configuration. The resource's plan and apply both run it, so they fail alike.
func Plan(cat *catalog.Catalog, cfg Config) (ResolvedConfig, []Problem) {
	return runPlan(cat, cfg, Validate)
}

// PlanEntry runs the pipeline of Plan on one resources entry on its own, for the
// quota_defaults provider function: a lone entry has no name, team or siblings to check, so
// only the entry checks run. It fails exactly when the plan of a quota with that entry fails
// in the entry. Problems carry Entry 0.
func PlanEntry(cat *catalog.Catalog, e Entry) (Resolved, []Problem) {
	rc, problems := runPlan(cat, Config{Resources: []Entry{e}}, validateEntries)
	if len(problems) > 0 {
		return Resolved{}, problems
	}
	return rc.Resources[0], nil
}

func runPlan(cat *catalog.Catalog, cfg Config, validate func(*catalog.Catalog, Config) []Problem) (ResolvedConfig, []Problem) {
	if problems := validate(cat, cfg); len(problems) > 0 {
		return ResolvedConfig{}, problems
	}
	rc := Defaults(cat, cfg)
	if problems := CheckRanges(rc); len(problems) > 0 {
		return ResolvedConfig{}, problems
	}
	return rc, nil
}
