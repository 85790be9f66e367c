package main

import (
	"io"
	"slices"
	"testing"
	"time"
)

func TestParseTeams(t *testing.T) {
	good := map[string][]int{
		"10,100,500,1000": {10, 100, 500, 1000},
		"100, 10":         {10, 100},
		"10,10,":          {10},
		"1":               {1},
	}
	for in, want := range good {
		got, err := parseTeams("-teams", in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseTeams(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", ",", "0", "-5", "ten", "10000", "10;100"} {
		if got, err := parseTeams("-teams", in); err == nil {
			t.Errorf("parseTeams(%q) = %v, want an error", in, got)
		}
	}
}

func TestParsePaths(t *testing.T) {
	good := map[string][]string{
		"kubernetes,sagemaker":  {pathKubernetes, pathSageMaker},
		"sagemaker, kubernetes": {pathKubernetes, pathSageMaker},
		"sagemaker,sagemaker,":  {pathSageMaker},
	}
	for in, want := range good {
		if got, err := parsePaths(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("parsePaths(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", ",", "kueue", "sagemaker;kubernetes"} {
		if got, err := parsePaths(in); err == nil {
			t.Errorf("parsePaths(%q) = %v, want an error", in, got)
		}
	}
}

func TestParseOptions(t *testing.T) {
	o, err := parseOptions(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Paths, []string{pathKubernetes, pathSageMaker}) || !slices.Equal(o.Teams, []int{10, 100, 500, 1000}) || o.Runs != 3 || o.MaxListsPerKind != 1 || o.CommandTimeout != time.Hour {
		t.Errorf("defaults: %+v", o)
	}
	o, err = parseOptions([]string{"-teams", "10", "-runs", "1"}, io.Discard)
	if err != nil || !slices.Equal(o.Teams, []int{10}) || o.Runs != 1 {
		t.Errorf("quick mode: %+v, %v", o, err)
	}
	if !slices.Equal(o.ShapesTeams, []int{100}) || !slices.Equal(o.Shapes, workspaceShapes) || !o.ShapesPlanNew || !o.ShapesVariants || o.ShapesOnly {
		t.Errorf("shapes defaults: %+v", o)
	}
	o, err = parseOptions([]string{"-shapes-teams", "none"}, io.Discard)
	if err != nil || len(o.ShapesTeams) != 0 {
		t.Errorf("-shapes-teams none: %+v, %v", o.ShapesTeams, err)
	}
	o, err = parseOptions([]string{"-paths", "kubernetes", "-shapes-only", "-shapes-teams", "1000,100", "-shapes", "module"}, io.Discard)
	if err != nil || !o.ShapesOnly || !slices.Equal(o.ShapesTeams, []int{100, 1000}) || !slices.Equal(o.Shapes, []workspaceShape{shapeModule}) {
		t.Errorf("shapes only: %+v, %v", o, err)
	}
	o, err = parseOptions(nil, io.Discard)
	if err != nil || !slices.Equal(o.PreviewTeams, []int{100, 1000}) || !o.PreviewBenchmark || o.PreviewOnly {
		t.Errorf("preview defaults: %+v, %v", o, err)
	}
	o, err = parseOptions([]string{"-preview-only", "-preview-teams", "10", "-runs", "1"}, io.Discard)
	if err != nil || !o.PreviewOnly || !slices.Equal(o.PreviewTeams, []int{10}) {
		t.Errorf("preview only: %+v, %v", o, err)
	}
	o, err = parseOptions([]string{"-preview-only", "-preview-teams", "none", "-paths", "sagemaker"}, io.Discard)
	if err != nil || len(o.PreviewTeams) != 0 || !o.PreviewBenchmark {
		t.Errorf("the preview benchmark alone: %+v, %v", o, err)
	}
	o, err = parseOptions([]string{"-query-only", "-paths", "sagemaker", "-teams", "1000"}, io.Discard)
	if err != nil || !o.QueryOnly || !slices.Equal(o.Paths, []string{pathSageMaker}) {
		t.Errorf("query only: %+v, %v", o, err)
	}
	for _, args := range [][]string{{"-runs", "0"}, {"-teams", "x"}, {"extra"}, {"-max-lists-per-kind", "-1"}, {"-paths", "kueue"},
		{"-query-only"}, {"-query-only", "-paths", "kubernetes"}, {"-query-only", "-paths", "sagemaker", "-query-terraform", "none"},
		{"-query-only", "-paths", "sagemaker", "-preview-only"},
		{"-shapes-teams", "0"}, {"-shapes", "loop"}, {"-shapes-only", "-shapes-teams", "none"}, {"-shapes-only", "-paths", "sagemaker"},
		{"-preview-teams", "0"}, {"-preview-only", "-shapes-only"}, {"-preview-only", "-paths", "sagemaker"},
		{"-preview-only", "-preview-teams", "none", "-preview-benchmark=false"}} {
		if _, err := parseOptions(args, io.Discard); err == nil {
			t.Errorf("parseOptions(%q): want an error", args)
		}
	}
}
