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
	var groups []string
	var family string
	var sizes []string
	flush := func() {
		if len(sizes) > 0 {
			groups = append(groups, family+".{"+strings.Join(sizes, ", ")+"}")
		}
	}
	for _, n := range c.NamesBySize() {
		f, size := splitName(n)
		if f != family {
			flush()
			family, sizes = f, nil
		}
		sizes = append(sizes, size)
	}
	flush()
	return strings.Join(groups, "; ")
}

// NamesBySize returns every known name grouped by family in name order, each family's sizes
// smallest first: ml.c5.large, ml.c5.xlarge, ml.c5.2xlarge, ..., ml.g5.xlarge. The slice is the
// caller's to keep.
func (c *Catalog) NamesBySize() []string {
	names := c.Names()
	slices.SortStableFunc(names, func(a, b string) int {
		familyA, sizeA := splitName(a)
		familyB, sizeB := splitName(b)
		return cmp.Or(cmp.Compare(familyA, familyB), cmp.Compare(sizeRank(sizeA), sizeRank(sizeB)))
	})
	return names
}

// splitName splits ml.<family>.<size> at its last dot; every catalog name has one.
func splitName(name string) (family, size string) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return name, ""
	}
	return name[:i], name[i+1:]
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
