package main

import "testing"

func TestSummarize(t *testing.T) {
	tests := []struct {
		in   []float64
		want summary
	}{
		{nil, summary{}},
		{[]float64{4}, summary{N: 1, Median: 4, Min: 4, Max: 4}},
		{[]float64{3, 1, 2}, summary{N: 3, Median: 2, Min: 1, Max: 3, MAD: 1}},
		{[]float64{10, 1, 2, 3}, summary{N: 4, Median: 2.5, Min: 1, Max: 10, MAD: 1}},
		{[]float64{5, 5, 9}, summary{N: 3, Median: 5, Min: 5, Max: 9, MAD: 0}},
	}
	for _, tc := range tests {
		if got := summarize(tc.in); got != tc.want {
			t.Errorf("summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestSummarizeDoesNotReorder(t *testing.T) {
	in := []float64{3, 1, 2}
	summarize(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("input reordered: %v", in)
	}
}

func TestRatio(t *testing.T) {
	if got := ratio(3, 2); got != 1.5 {
		t.Errorf("ratio(3, 2) = %v", got)
	}
	if got := ratio(3, 0); got != 0 {
		t.Errorf("ratio(3, 0) = %v, want 0 (no floor)", got)
	}
}
