package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Commands of the shapes section beyond the main operations: the chained shape's no-op plan
// with Terraform's knobs turned.
var shapeVariants = []struct {
	op   string
	args []string
}{
	{"plan-noop -refresh=false", append(slices.Clone(argsPlan), "-refresh=false")},
	{"plan-noop -parallelism=20", append(slices.Clone(argsPlan), "-parallelism=20")},
	{"plan-noop -parallelism=50", append(slices.Clone(argsPlan), "-parallelism=50")},
}

// shapeSample is one command on one shape: the provider's configuration and the terraform_data
// configuration of the same shape, each with the machine's load when it started.
type shapeSample struct {
	Op            string    `json:"operation"`
	Provider      runSample `json:"provider"`
	ProviderLoad  float64   `json:"provider_load_average_1m"`
	TerraformData runSample `json:"terraform_data"`
	FloorLoad     float64   `json:"terraform_data_load_average_1m"`
	// FloorOp names the command whose terraform_data figure is reused ("" when measured for this one).
	FloorOp string `json:"terraform_data_of,omitempty"`
	// Sequential is the time one client takes to GET every object of the workload, one after
	// another (the main section's read floor); set for the plans of applied resources.
	Sequential float64 `json:"sequential_requests_seconds,omitempty"`
	Ratio      float64 `json:"ratio_to_terraform_data"`             // provider wall / terraform_data wall
	CPURatio   float64 `json:"cpu_ratio_to_terraform_data"`         // provider CPU / terraform_data CPU
	RatioReads float64 `json:"ratio_to_floor_with_reads,omitempty"` // provider wall / (terraform_data + Sequential)
}

// shapeResult is one shape at one team count.
type shapeResult struct {
	Teams       int            `json:"teams"`
	Shape       string         `json:"shape"`
	Description string         `json:"description"`
	Samples     []*shapeSample `json:"commands"`
}

func (r *shapeResult) add(s *shapeSample) {
	s.Ratio = ratio(s.Provider.WallSeconds, s.TerraformData.WallSeconds)
	s.CPURatio = ratio(s.Provider.CPUSeconds, s.TerraformData.CPUSeconds)
	if s.Sequential > 0 {
		s.RatioReads = ratio(s.Provider.WallSeconds, s.TerraformData.WallSeconds+s.Sequential)
	}
	r.Samples = append(r.Samples, s)
}

// shapeGroups splits shapes into those that share one applied state (the same resource
// addresses), each group applied once and planned in every shape of it.
func shapeGroups(shapes []workspaceShape) [][]workspaceShape {
	var top, modules []workspaceShape
	for _, s := range shapes {
		if s.resourceAddresses() {
			top = append(top, s)
		} else {
			modules = append(modules, s)
		}
	}
	var out [][]workspaceShape
	for _, g := range [][]workspaceShape{top, modules} {
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// runShapes measures every shape at every team count of -shapes-teams into res.
func (b *bench) runShapes(ctx context.Context, res *results, repo, providerBlock string) error {
	for _, n := range b.opts.ShapesTeams {
		byShape := map[workspaceShape]*shapeResult{}
		for _, s := range b.opts.Shapes {
			byShape[s] = &shapeResult{Teams: n, Shape: s.String(), Description: s.describe()}
			res.Shapes = append(res.Shapes, byShape[s])
		}
		for _, group := range shapeGroups(b.opts.Shapes) {
			if err := b.runShapeGroup(ctx, repo, providerBlock, n, group, byShape); err != nil {
				return fmt.Errorf("workspace shapes, %d teams: %w", n, err)
			}
		}
	}
	return nil
}

// runShapeGroup measures a group of shapes that share their addresses at n teams: plans of
// new resources, one apply in the group's first shape, then a no-op plan in each shape; then
// it empties the cluster and the state (no destroy: that is measured by the main section).
func (b *bench) runShapeGroup(ctx context.Context, repo, providerBlock string, n int, group []workspaceShape, byShape map[workspaceShape]*shapeResult) error {
	name := group[0].String()
	pdir := filepath.Join(b.workDir, fmt.Sprintf("shapes-%s-provider-%d", name, n))
	ddir := filepath.Join(b.workDir, fmt.Sprintf("shapes-%s-terraform_data-%d", name, n))
	if err := writeShapeDir(pdir, repo, providerConfig, providerBlock); err != nil {
		return err
	}
	if err := writeShapeDir(ddir, repo, terraformDataConfig, ""); err != nil {
		return err
	}
	if left, err := b.cleaner.ensureClean(ctx); err != nil {
		return err
	} else if left != "" {
		b.note(fmt.Sprintf("workspace shapes, %d teams: removed before the %s shapes: %s", n, name, left))
	}
	g := shapeGroupRun{b: b, n: n, pdir: pdir, ddir: ddir, byShape: byShape}

	b.logf("workspace shapes, %d teams: %s (load average %.2f)", n, strings.Join(shapeNames(group), ", "), loadAverage())
	if b.opts.ShapesPlanNew {
		for _, s := range group {
			if _, err := g.measure(ctx, s, opPlanNew, exitChanges, 0, nil, argsPlan); err != nil {
				return err
			}
		}
	}
	if _, err := g.measure(ctx, group[0], opApply, 0, 0, nil, argsApply); err != nil {
		return err
	}
	reads, err := b.replayer.replay(ctx, objectReads(n))
	if err != nil {
		return fmt.Errorf("sequential reads: %w", err)
	}
	for _, s := range group {
		noop, err := g.measure(ctx, s, opPlanNoop, exitNoChanges, reads.Seconds, nil, argsPlan)
		if err != nil {
			return err
		}
		if s != shapeChained || !b.opts.ShapesVariants {
			continue
		}
		// Against the default no-op plan's floor: the variants are the user's knobs, and at
		// 1000 teams each floor is a minute of Terraform core.
		for _, v := range shapeVariants {
			if _, err := g.measure(ctx, s, v.op, exitNoChanges, reads.Seconds, noop, v.args); err != nil {
				return err
			}
		}
	}
	_, err = b.clean(ctx, pdir, ddir)
	return err
}

// shapeGroupRun is where one group of shapes at one team count runs and what it records.
type shapeGroupRun struct {
	b          *bench
	n          int
	pdir, ddir string
	byShape    map[workspaceShape]*shapeResult
}

// measure runs op in shape s on the provider's configuration and, unless floor is given (a
// floor measured already with the same configuration), on the terraform_data one.
func (g shapeGroupRun) measure(ctx context.Context, s workspaceShape, op string, wantExit int, sequential float64, floor *shapeSample, args []string) (*shapeSample, error) {
	for _, d := range []struct {
		dir   string
		floor bool
	}{{g.pdir, false}, {g.ddir, true}} {
		if err := os.WriteFile(filepath.Join(d.dir, teamsFile), []byte(shapeConfig(s, d.floor, g.n)), 0o644); err != nil {
			return nil, err
		}
		if s == shapeModule {
			if _, err := g.b.tf.run(ctx, d.dir, fmt.Sprintf("%d-shape-%s get", g.n, s), 0, "get", "-no-color"); err != nil {
				return nil, err
			}
		}
	}
	label := fmt.Sprintf("%d-shape-%s %s", g.n, s, op)
	sample := &shapeSample{Op: op, Sequential: sequential}
	var err error
	sample.ProviderLoad = loadAverage()
	if sample.Provider, err = g.b.measureProvider(ctx, g.pdir, label+" (provider)", wantExit, args...); err != nil {
		return nil, err
	}
	if floor != nil {
		sample.TerraformData, sample.FloorLoad, sample.FloorOp = floor.TerraformData, floor.FloorLoad, floor.Op
	} else {
		sample.FloorLoad = loadAverage()
		if sample.TerraformData, err = g.b.measureTerraformData(ctx, g.ddir, label+" (terraform_data)", wantExit, args...); err != nil {
			return nil, err
		}
	}
	g.byShape[s].add(sample)
	return sample, nil
}

func shapeNames(shapes []workspaceShape) []string {
	var out []string
	for _, s := range shapes {
		out = append(out, s.String())
	}
	return out
}

// writeShapeDir creates dir with main.tf and the modules the module shape calls: a copy of
// examples/modules/hyperpod-team (module sources must be relative paths) and its
// terraform_data counterpart.
func writeShapeDir(dir, repo string, kind configKind, providerBlock string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, shapeModuleDir), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, shapeFloorModuleDir), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, mainFile), []byte(mainConfig(kind, providerBlock)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, shapeFloorModuleDir, mainFile), []byte(floorTeamModule), 0o644); err != nil {
		return err
	}
	src := filepath.Join(repo, "examples", "modules", "hyperpod-team")
	files, err := filepath.Glob(filepath.Join(src, "*.tf"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no module in %s", src)
	}
	for _, f := range files {
		if err := copyFile(f, filepath.Join(dir, shapeModuleDir, filepath.Base(f)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// loadAverage is the machine's one-minute load average (0 where /proc/loadavg is missing):
// other work on the machine moves the figures, and the report says how busy it was.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
