package main

import (
	"math"
	"slices"
)

// summary describes the runs of one figure. The spread the report shows is min-max: with
// the default three runs it is every observation there is; MAD (median absolute deviation)
// is kept in the JSON for longer series.
type summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	MAD    float64 `json:"mad"`
}

func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	m := median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return summary{N: len(xs), Median: m, Min: slices.Min(xs), Max: slices.Max(xs), MAD: median(dev)}
}

// median of xs (the mean of the middle two for an even count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// ratio is a/b, or 0 when b is not positive (no floor to compare with).
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}
