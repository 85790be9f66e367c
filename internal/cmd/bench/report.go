package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// floorFormula is stated in every results file.
const floorFormula = "floor(op) = median wall time of op on the terraform_data configuration of the same graph " +
	"(Terraform core, no provider) + median time for one client-go HTTP client (rest.HTTPClientFor, no rate limit, " +
	"answers read but not decoded) to send, one after another through the same proxy: for the no-op plan, the plan " +
	"after one change and refresh-only, one GET of every object the workload consists of (each team's Namespace, " +
	"LocalQueue and ClusterQueue, and each ResourceFlavor once); for the plan of new resources, nothing; for apply " +
	"and destroy, the writes the provider made (same methods, URLs and bodies) and the first GET of each URL, " +
	"replayed after the run against the same cluster state (empty for apply, populated for destroy). " +
	"ratio = median provider wall time / floor."

// floorWhy explains the two kinds of request floor.
const floorWhy = "The read floor is a property of the workload, one GET per object, whatever the provider does: a " +
	"provider that reads less (a LIST instead of many GETs) must not lower its own floor. Writes are floored by " +
	"replaying the provider's own writes, since they cost etcd more than reads and are what apply and destroy " +
	"consist of; repeated GETs of one URL there are polls for a deletion and are sent once, so polling harder does " +
	"not raise the floor. The floor leaves out waiting itself: destroy waits until each Namespace is gone, and " +
	"that waiting counts against the provider. Requests are sent one after another, so the provider, which " +
	"Terraform runs ten resources at a time, can beat the request part of the floor."

const spreadNote = "min-max over the runs (MAD in the JSON)"

// writeResults writes <dir>/<date>.md and <date>.json and returns their paths.
func writeResults(dir string, r *results) (string, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	md := filepath.Join(dir, r.Date+".md")
	js := filepath.Join(dir, r.Date+".json")
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(js, append(data, '\n'), 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(md, []byte(renderMarkdown(r)), 0o644); err != nil {
		return "", "", err
	}
	return md, js, nil
}

func renderMarkdown(r *results) string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "# Benchmark results, %s\n\n", r.Date)
	fmt.Fprintf(&b, "Provider `%s`, Terraform %s, %s, %s/%s, %d CPUs", m.ProviderCommit, orUnknown(m.TerraformVersion), orUnknown(m.GoVersion), m.OS, m.Arch, m.CPUs)
	if m.CPUModel != "" {
		fmt.Fprintf(&b, " (%s)", m.CPUModel)
	}
	if m.MemoryTotal != "" {
		fmt.Fprintf(&b, ", memory %s", m.MemoryTotal)
	}
	fmt.Fprintf(&b, ". Local control plane: kube-apiserver %s and etcd %s on 127.0.0.1, Kueue %s CRDs, reached through the bench's counting proxy.\n\n",
		m.KubernetesVersion, m.EtcdVersion, m.KueueVersion)
	fmt.Fprintf(&b, "Started %s, finished %s. `make bench BENCH_FLAGS='-teams %s -runs %d'`. Per team: one `hyperpod_team_namespace` and one `hyperpod_compute_quota` with three instance types. Terraform default parallelism (10).\n\n",
		r.StartedAt, r.FinishedAt, joinInts(r.Settings.Teams), r.Settings.Runs)
	if r.Error != "" {
		fmt.Fprintf(&b, "**The run failed:** %s\n\n", codeBlockless(r.Error))
	}

	b.WriteString("Wall times are medians of the runs in seconds; spread is " + spreadNote + ". ")
	b.WriteString("Peak RSS is the largest resident set of the provider processes of a command (median over runs, MB = 10^6 bytes).\n\n")
	b.WriteString(floorFormula + "\n\n" + floorWhy + "\n\n")

	for _, tr := range r.TeamCounts {
		fmt.Fprintf(&b, "## %d teams\n\n", tr.Teams)
		b.WriteString("| operation | wall (s) | spread (s) | floor (s) | ratio | terraform_data (s) | sequential requests (s) | peak RSS (MB) |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, o := range tr.Ops {
			if o.Wall.N == 0 {
				fmt.Fprintf(&b, "| %s | not measured | | | | | | |\n", o.Op)
				continue
			}
			fmt.Fprintf(&b, "| %s | %.2f | %.2f-%.2f | %s | %s | %.2f | %s | %.1f |\n",
				o.Op, o.Wall.Median, o.Wall.Min, o.Wall.Max, seconds(o.Floor), ratioText(o.Ratio),
				o.TFDataWall.Median, seconds(o.Sequential.Median), o.PeakRSSMB.Median)
		}
		b.WriteString("\nRequests per command (a range when the runs differ; list-continue is a further page of a LIST the provider pages 500 objects at a time):\n\n")
		b.WriteString("| operation | total | by verb | by resource |\n|---|---:|---|---|\n")
		for _, o := range tr.Ops {
			if o.Wall.N == 0 {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", o.Op, rangeText(o.Requests.Total),
				rangeMap(o.Requests.ByVerb), rangeMap(o.Requests.ByResource))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Targets\n\n| target | result | detail |\n|---|---|---|\n")
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.Name, strings.ToUpper(t.Status), t.Detail)
	}
	if r.Findings != "" {
		b.WriteString("\n## Findings\n\n")
		b.WriteString(strings.TrimSpace(r.Findings) + "\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

func rangeText(c countRange) string {
	if c.Min == c.Max {
		return fmt.Sprint(c.Min)
	}
	return fmt.Sprintf("%d-%d", c.Min, c.Max)
}

func rangeMap(m map[string]countRange) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range sortedRangeKeys(m) {
		parts = append(parts, k+" "+rangeText(m[k]))
	}
	return strings.Join(parts, ", ")
}

func seconds(s float64) string {
	if s == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", s)
}

func ratioText(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// codeBlockless keeps a multi-line error readable inside a Markdown paragraph.
func codeBlockless(s string) string {
	first, rest, ok := strings.Cut(s, "\n")
	if !ok {
		return s
	}
	return first + "\n\n```\n" + rest + "\n```"
}
