package quota

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// ResolveEntry checks and resolves one resources entry on its own, for the quota_defaults
// provider function. It runs the same steps the resource's plan runs for each entry, in the
// same order (Validate, then Resolve, then CheckRanges), and stops at the first step that
// reports problems, so the function fails exactly when the plan of that entry would. Problems
// carry Entry 0.
func ResolveEntry(cat *catalog.Catalog, e Entry) (Resolved, []Problem) {
	// The entry checks only: a lone entry has no name, team or siblings to check.
	v := validator{cat: cat, cfg: Config{Resources: []Entry{e}}}
	v.entry(0, e, map[string]int{})
	if len(v.problems) > 0 {
		return Resolved{}, v.problems
	}
	r, problems := resolve(cat, e, 0)
	if len(problems) > 0 {
		return Resolved{}, problems
	}
	if problems := CheckRanges(ResolvedConfig{Resources: []Resolved{r}}); len(problems) > 0 {
		return Resolved{}, problems
	}
	return r, nil
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
	b.WriteString(" Known types, by family: " + namesByFamily(cat.Names()) + ".")
	b.WriteString(" Provider functions cannot see the provider's instance_types setting; for a type defined there, " +
		"read its figures with the hyperpod_instance_type_capacity data source instead.")
	return b.String()
}

// namesByFamily renders sorted names compactly, e.g. "ml.c5.{large, xlarge, 2xlarge}; ml.g5.{xlarge}",
// sizes smallest first.
func namesByFamily(names []string) string {
	var groups []string
	var family string
	var sizes []string
	flush := func() {
		if len(sizes) > 0 {
			slices.SortStableFunc(sizes, func(a, b string) int { return cmp.Compare(sizeRank(a), sizeRank(b)) })
			groups = append(groups, family+".{"+strings.Join(sizes, ", ")+"}")
		}
	}
	for _, n := range names {
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			continue // every catalog name is ml.<family>.<size>
		}
		if n[:i] != family {
			flush()
			family, sizes = n[:i], nil
		}
		sizes = append(sizes, n[i+1:])
	}
	flush()
	return strings.Join(groups, "; ")
}

// sizeRank orders instance sizes as EC2 does: medium, large, xlarge, 2xlarge, ... Unknown
// spellings sort last, in name order (the sort is stable).
func sizeRank(size string) float64 {
	switch size {
	case "medium":
		return 0.25
	case "large":
		return 0.5
	case "xlarge":
		return 1
	}
	if n, ok := strings.CutSuffix(size, "xlarge"); ok {
		if f, err := strconv.ParseFloat(n, 64); err == nil {
			return f
		}
	}
	return math.Inf(1)
}
