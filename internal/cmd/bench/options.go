package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// options are the command-line flags.
type options struct {
	Paths           []string
	Teams           []int
	Runs            int
	Terraform       string
	Assets          string
	OutDir          string
	Repo            string
	MaxListsPerKind int
	CommandTimeout  time.Duration
	Keep            bool
	Findings        string
}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	paths := fs.String("paths", pathKubernetes+","+pathSageMaker, "comma-separated paths to measure: "+pathKubernetes+
		" (Kueue objects on a local control plane), "+pathSageMaker+" (task_governance against the SageMaker API emulator)")
	teams := fs.String("teams", "10,100,500,1000", "comma-separated team counts to measure")
	fs.IntVar(&o.Runs, "runs", 3, "runs per team count (the report shows the median and min-max)")
	fs.StringVar(&o.Terraform, "terraform", "terraform", "Terraform binary")
	fs.StringVar(&o.Assets, "assets", "", "control plane assets directory (default $HYPERPOD_CONTROLPLANE_DIR, else scripts/controlplane-assets.sh)")
	fs.StringVar(&o.OutDir, "out", "bench/results", "directory for <date>.md and <date>.json, relative to the repository root")
	fs.StringVar(&o.Repo, "repo", "", "repository root (default: found from the working directory)")
	fs.IntVar(&o.MaxListsPerKind, "max-lists-per-kind", defaultListsPerKind, "LISTs per resource kind a no-op plan may make")
	fs.DurationVar(&o.CommandTimeout, "command-timeout", time.Hour, "limit for one Terraform command")
	fs.StringVar(&o.Findings, "findings", "bench/findings.md", "hand-written analysis copied into the results, relative to the repository root (skipped when missing)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the temporary directory (configurations, state, Terraform output, control plane logs)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run ./internal/cmd/bench [flags]   (or: make bench BENCH_FLAGS='...')")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var err error
	if o.Paths, err = parsePaths(*paths); err != nil {
		return o, err
	}
	if o.Teams, err = parseTeams(*teams); err != nil {
		return o, err
	}
	if o.Runs < 1 {
		return o, fmt.Errorf("-runs %d: need at least 1", o.Runs)
	}
	if o.MaxListsPerKind < 0 {
		return o, fmt.Errorf("-max-lists-per-kind %d: must not be negative", o.MaxListsPerKind)
	}
	if o.CommandTimeout <= 0 {
		return o, fmt.Errorf("-command-timeout %s: must be positive", o.CommandTimeout)
	}
	return o, nil
}

// maxTeams keeps team names at bench-NNNN.
const maxTeams = 9999

// parseTeams parses "10,100" into ascending, distinct team counts.
func parseTeams(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > maxTeams {
			return nil, fmt.Errorf("-teams: %q is not a team count between 1 and %d", f, maxTeams)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-teams %q: no team counts", s)
	}
	slices.Sort(out)
	return out, nil
}

// The two ways the provider stores quotas.
const (
	pathKubernetes = "kubernetes"
	pathSageMaker  = "sagemaker"
)

// parsePaths parses "sagemaker,kubernetes" into the distinct paths, Kubernetes first.
func parsePaths(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "" || slices.Contains(out, f):
		case f == pathKubernetes || f == pathSageMaker:
			out = append(out, f)
		default:
			return nil, fmt.Errorf("-paths: %q is not %s or %s", f, pathKubernetes, pathSageMaker)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-paths %q: no paths", s)
	}
	slices.Sort(out) // kubernetes before sagemaker
	return out, nil
}
