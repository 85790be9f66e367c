package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The admission package's benchmark of one preview of a large cohort: 1000 teams in one cohort,
// four jobs each (two admitted, two pending), one team's quota lowered. Each sub-benchmark runs
// once, in a process of its own, so the process's CPU time is that one preview's (with the
// cohort's construction, which is small beside it).
const (
	previewBenchmark   = "BenchmarkPreview1000Teams"
	previewBenchPkg    = "./internal/admission"
	fairSharingBench   = "fairSharing=true"
	maxFairPreviewCPU  = 1.0 // seconds of CPU for one preview with fair sharing
	previewBenchBinary = "admission.test"
)

// previewSubBenchmarks are the sub-benchmarks run, each in its own process.
var previewSubBenchmarks = []string{"fairSharing=false", fairSharingBench}

// goBenchmark is one sub-benchmark run once.
type goBenchmark struct {
	Name    string  `json:"name"`
	NsPerOp float64 `json:"ns_per_op,omitempty"`
	// CPUSeconds is the user and system time of the test process that ran only this.
	CPUSeconds float64 `json:"process_cpu_seconds,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// runPreviewBenchmarks builds the admission package's test binary and runs each of
// previewSubBenchmarks once. A build or run that fails is recorded in the result, not returned:
// the rest of the bench does not depend on it.
func runPreviewBenchmarks(ctx context.Context, repo, tmp string, timeout time.Duration, logf func(string, ...any)) []goBenchmark {
	bin := filepath.Join(tmp, previewBenchBinary)
	logf("building the %s test binary for %s", previewBenchPkg, previewBenchmark)
	build := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, previewBenchPkg)
	build.Dir, build.Env = repo, childEnv(os.Environ())
	var out []goBenchmark
	if b, err := build.CombinedOutput(); err != nil {
		for _, sub := range previewSubBenchmarks {
			out = append(out, goBenchmark{Name: previewBenchmark + "/" + sub,
				Error: fmt.Sprintf("go test -c %s: %v: %s", previewBenchPkg, err, lastLines(string(b), 5))})
		}
		return out
	}
	for _, sub := range previewSubBenchmarks {
		g := runGoBenchmark(ctx, bin, filepath.Join(repo, previewBenchPkg), sub, timeout)
		if g.Error != "" {
			logf("  %-34s %s", g.Name, g.Error)
		} else {
			logf("  %-34s %8.2f s/op  CPU %.2f s", g.Name, g.NsPerOp/1e9, g.CPUSeconds)
		}
		out = append(out, g)
	}
	return out
}

// runGoBenchmark runs sub of previewBenchmark once with the test binary bin in dir (the
// package's directory, as go test runs it).
func runGoBenchmark(ctx context.Context, bin, dir, sub string, timeout time.Duration) goBenchmark {
	g := goBenchmark{Name: previewBenchmark + "/" + sub}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pattern := "^" + previewBenchmark + "$/^" + regexp.QuoteMeta(sub) + "$"
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", pattern, "-test.benchtime", "1x", "-test.count", "1")
	cmd.Dir, cmd.Env = dir, childEnv(os.Environ())
	b, err := cmd.CombinedOutput()
	if err != nil {
		g.Error = fmt.Sprintf("%v: %s", err, lastLines(string(b), 5))
		return g
	}
	if cmd.ProcessState != nil {
		g.CPUSeconds = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	ns, ok := nsPerOp(string(b), g.Name)
	if !ok {
		g.Error = fmt.Sprintf("no result for %s in the output (has the sub-benchmark been renamed?): %s", g.Name, lastLines(string(b), 5))
		return g
	}
	g.NsPerOp = ns
	return g
}

// nsPerOp finds the ns/op of benchmark name in go test's output, whose lines name it with a
// -GOMAXPROCS suffix when that is above 1: "BenchmarkX/sub-2   1   123 ns/op".
func nsPerOp(out, name string) (float64, bool) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != "ns/op" {
			continue
		}
		got := f[0]
		if i := strings.LastIndex(got, "-"); i > 0 {
			if _, err := strconv.Atoi(got[i+1:]); err == nil {
				got = got[:i]
			}
		}
		if got != name {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

// lastLines is the last n non-empty lines of s, joined by " / " for a one-line message.
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
