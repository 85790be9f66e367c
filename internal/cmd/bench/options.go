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

	// QueryTerraform is the Terraform of the query scenario (1.14 or later); "" resolves one,
	// "none" skips the scenario.
	QueryTerraform string

	// The workspace shapes section (Kubernetes path): team counts (none: off), which shapes,
	// whether to plan new resources too, and the -refresh=false and -parallelism variants.
	ShapesTeams    []int
	Shapes         []workspaceShape
	ShapesPlanNew  bool
	ShapesVariants bool
	ShapesOnly     bool

	// The admission preview section (Kubernetes path): team counts of plan-changed-with-jobs
	// (none: off), whether to run BenchmarkPreview1000Teams, and whether to measure only these.
	PreviewTeams     []int
	PreviewBenchmark bool
	PreviewOnly      bool

	// QueryOnly measures only the query scenario and refresh-only, whose floor is the query's,
	// on the SageMaker path.
	QueryOnly bool
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
	fs.StringVar(&o.QueryTerraform, "query-terraform", "", queryTerraformUsage)
	fs.StringVar(&o.Assets, "assets", "", "control plane assets directory (default $HYPERPOD_CONTROLPLANE_DIR, else scripts/controlplane-assets.sh)")
	fs.StringVar(&o.OutDir, "out", "bench/results", "directory for <date>.md and <date>.json, relative to the repository root")
	fs.StringVar(&o.Repo, "repo", "", "repository root (default: found from the working directory)")
	fs.IntVar(&o.MaxListsPerKind, "max-lists-per-kind", defaultListsPerKind, "LISTs per resource kind a no-op plan may make")
	fs.DurationVar(&o.CommandTimeout, "command-timeout", time.Hour, "limit for one Terraform command")
	fs.StringVar(&o.Findings, "findings", "bench/findings.md", "hand-written analysis copied into the results, relative to the repository root (skipped when missing)")
	shapesTeams := fs.String("shapes-teams", "100", "comma-separated team counts of the workspace shapes section (\"none\" skips it); "+
		"each is one run of every shape and its terraform_data floor: at 100 and 1000 teams about 16-32 minutes")
	shapes := fs.String("shapes", "chained,indexed,module,key-depends-on,key-no-reference", "workspace shapes to measure")
	fs.BoolVar(&o.ShapesPlanNew, "shapes-plan-new", true, "also plan every shape's new resources against an empty state")
	fs.BoolVar(&o.ShapesVariants, "shapes-variants", true, "also plan the chained shape with -refresh=false, -parallelism=20 and -parallelism=50")
	fs.BoolVar(&o.ShapesOnly, "shapes-only", false, "measure only the workspace shapes (Kubernetes path), into workspace-shapes-<date>.md and .json")
	previewTeams := fs.String("preview-teams", "100,1000", "comma-separated team counts of "+opPlanChangedWithJobs+
		" (\"none\" skips it): one cohort, fair sharing, "+fmt.Sprint(jobsPerTeam)+" jobs per team of which half pending, a plan that changes "+
		fmt.Sprint(changedQuotas)+" quotas with the admission preview on and off, -runs times each")
	fs.BoolVar(&o.PreviewBenchmark, "preview-benchmark", true, "run "+previewBenchmark+" of internal/admission (one preview of a 1000-team cohort, CPU only)")
	fs.BoolVar(&o.PreviewOnly, "preview-only", false, "measure only the admission preview section, into admission-preview-<date>.md and .json")
	fs.BoolVar(&o.QueryOnly, "query-only", false, "measure only "+opQuery+" and "+opRefreshOnly+" (whose floor is the query's) on the "+
		pathSageMaker+" path, into query-<date>.md and .json: the quotas are created by an apply that is not measured (-parallelism "+
		fmt.Sprint(queryOnlyParallelism)+"), and so is the terraform_data floor's")
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
	if o.Teams, err = parseTeams("-teams", *teams); err != nil {
		return o, err
	}
	if strings.TrimSpace(*shapesTeams) != "none" {
		if o.ShapesTeams, err = parseTeams("-shapes-teams", *shapesTeams); err != nil {
			return o, err
		}
	}
	if o.Shapes, err = parseShapes(*shapes); err != nil {
		return o, err
	}
	if strings.TrimSpace(*previewTeams) != "none" {
		if o.PreviewTeams, err = parseTeams("-preview-teams", *previewTeams); err != nil {
			return o, err
		}
	}
	if err := checkSections(o); err != nil {
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

// checkSections refuses the flags of sections measured alone (-preview-only, -shapes-only,
// -query-only) that measure nothing or more than one section.
func checkSections(o options) error {
	if o.PreviewOnly && o.ShapesOnly {
		return fmt.Errorf("-preview-only and -shapes-only each measure one section: pick one")
	}
	if o.PreviewOnly && len(o.PreviewTeams) > 0 && !slices.Contains(o.Paths, pathKubernetes) {
		return fmt.Errorf("-preview-only with -preview-teams needs the %s path", pathKubernetes)
	}
	if o.PreviewOnly && len(o.PreviewTeams) == 0 && !o.PreviewBenchmark {
		return fmt.Errorf("-preview-only with -preview-teams none and -preview-benchmark=false measures nothing")
	}
	if o.ShapesOnly && (len(o.ShapesTeams) == 0 || !slices.Contains(o.Paths, pathKubernetes)) {
		return fmt.Errorf("-shapes-only needs -shapes-teams and the %s path", pathKubernetes)
	}
	if o.QueryOnly && (o.PreviewOnly || o.ShapesOnly || !slices.Equal(o.Paths, []string{pathSageMaker}) || o.QueryTerraform == "none") {
		return fmt.Errorf("-query-only measures the %s scenario on the %s path alone: not with -preview-only, -shapes-only, "+
			"-query-terraform none or another path (-paths %s)", opQuery, pathSageMaker, pathSageMaker)
	}
	return nil
}

// queryTerraformUsage is the help of -query-terraform.
const queryTerraformUsage = "Terraform 1.14 or later for the " + opQuery + " scenario (terraform query -generate-config-out of " +
	"every team); default: -terraform when it is 1.14 or later, else the one scripts/terraform-assets.sh prints (Terraform " +
	"1.15.0, built once and cached); \"none\" skips the scenario"

// maxTeams keeps team names at bench-NNNN.
const maxTeams = 9999

// parseTeams parses "10,100", the value of flag name, into ascending, distinct team counts.
func parseTeams(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > maxTeams {
			return nil, fmt.Errorf("%s: %q is not a team count between 1 and %d", name, f, maxTeams)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s %q: no team counts", name, s)
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
	return parseChoices("paths", s, []string{pathKubernetes, pathSageMaker}, func(p string) string { return p })
}

// parseChoices parses the comma-separated value s of flag -name into the distinct choices it
// names, in the order of choices; an unknown name or none at all is an error.
func parseChoices[T comparable](name, s string, choices []T, text func(T) string) ([]T, error) {
	named := make([]bool, len(choices))
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		i := slices.IndexFunc(choices, func(c T) bool { return text(c) == f })
		if i < 0 {
			var names []string
			for _, c := range choices {
				names = append(names, text(c))
			}
			return nil, fmt.Errorf("-%s: %q is not one of %s", name, f, strings.Join(names, ", "))
		}
		named[i] = true
	}
	var out []T
	for i, c := range choices {
		if named[i] {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-%s %q: none given", name, s)
	}
	return out, nil
}
