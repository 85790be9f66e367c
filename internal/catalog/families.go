package catalog

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// NamesByFamily renders the catalog's names compactly, grouped by family in name order, e.g.
// "ml.c5.{large, xlarge, 2xlarge}; ml.g5.{xlarge}", sizes smallest first.
func (c *Catalog) NamesByFamily() string {
	names := c.Names()
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
