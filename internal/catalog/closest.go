package catalog

import (
	"cmp"
	"slices"
	"strings"
)

// Closest returns up to n known names nearest to name, best first, for "did you mean" messages.
//
// The query is normalised the way people mistype instance types: case and surrounding spaces
// are ignored, a missing "ml." prefix is added (g5.12xlarge is the EC2 spelling) and a trailing
// "xl" is read as "xlarge". Names of the query's family come first, then families that extend
// it or that it extends (p5 and p5e, p6 and p6-b200), then the rest; within each group the
// Levenshtein distance ranks, and ties are broken by name so the order never changes.
func (c *Catalog) Closest(name string, n int) []string {
	if n <= 0 {
		return nil
	}
	q := normalizeQuery(name)
	qFamily := family(q)

	type candidate struct {
		name        string
		group, dist int
	}
	cands := make([]candidate, 0, len(c.names))
	for _, known := range c.names {
		cands = append(cands, candidate{
			name:  known,
			group: familyGroup(qFamily, family(known)),
			dist:  levenshtein(q, known),
		})
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.dist, b.dist), strings.Compare(a.name, b.name))
	})
	out := make([]string, 0, min(n, len(cands)))
	for _, cd := range cands[:min(n, len(cands))] {
		out = append(out, cd.name)
	}
	return out
}

// normalizeQuery undoes the common misspellings listed on Closest.
func normalizeQuery(name string) string {
	q := strings.ToLower(strings.TrimSpace(name))
	if !strings.HasPrefix(q, "ml.") {
		q = "ml." + q
	}
	if strings.HasSuffix(q, "xl") {
		q += "arge"
	}
	return q
}

// family returns the part between "ml." and the size, e.g. "p6-b200"; "" when there is none.
func family(name string) string {
	rest, ok := strings.CutPrefix(name, "ml.")
	if !ok {
		return ""
	}
	f, _, _ := strings.Cut(rest, ".")
	return f
}

// familyGroup ranks how related a known family is to the query's: 0 same, 1 one extends the
// other, 2 unrelated.
func familyGroup(query, known string) int {
	switch {
	case query == "":
		return 2
	case query == known:
		return 0
	case strings.HasPrefix(known, query) || strings.HasPrefix(query, known):
		return 1
	default:
		return 2
	}
}

// levenshtein is the edit distance between a and b (insertions, deletions, substitutions).
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
