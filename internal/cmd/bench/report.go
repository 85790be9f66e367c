package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// sagemakerFloorFormula is the SageMaker path's floor, stated in every results file that
// measures it.
const sagemakerFloorFormula = "SageMaker path: floor(op) = median wall time of op on a terraform_data configuration of one resource " +
	"per team with the quota's input (Terraform core, no provider) + the time the SDK's SageMaker client (static credentials, " +
	"no retries) takes to send, one after another to the same emulator, the fewest requests the workload needs: nothing for " +
	"the plan of new resources; ceil(N/100) ListComputeQuotas pages (100 is the API's largest page) for the no-op plan, the " +
	"plan after one change and refresh-only, since the list carries each quota's version and a quota whose version did not " +
	"move needs no Describe; for refresh-only-tagged (refresh-only after every quota got one tag, through an apply not " +
	"measured, and before the tags are removed again) the same pages plus one ListTags per quota, since the list carries no " +
	"tags and a refresh reads them only of quotas whose state holds some; for apply the list's one page of an empty cluster, since a create for a team that already " +
	"holds a quota is refused, then one CreateComputeQuota per quota and the two DescribeComputeQuota of its wait; for " +
	"destroy the list's pages, then one DeleteComputeQuota per quota and the two Describes of its wait. Two Describes: the " +
	"emulator completes a transition once Describe has reported it once, so the first sees Creating or Deleting and the " +
	"second the outcome. The floor leaves out waiting. The provider's waiters sleep at least 2 s between Describes " +
	"(sagemakerclient.DefaultPoll.Min, chosen for the real API, where a quota takes seconds to settle), so apply and " +
	"destroy of N quotas sleep at least ceil(N/10) x 2 s with Terraform running ten at a time: the poll bound, reported " +
	"beside the floor with the ratio to floor + poll bound. Apply and destroy floors are timed after destroy, on an empty " +
	"emulator; the reads' right after the command. request ratio = most requests over the runs / the floor's."

// noopFloorFormula is the second floor of the plan of new resources and the read commands,
// stated in every results file.
const noopFloorFormula = "no-op floor(op) = median wall time of op with the no-op provider (internal/cmd/noopprovider: the " +
	"provider's schemas served by a server that does no work; its refresh returns the stored state and its plan the " +
	"proposed new state), run right after the provider's op in the same working directory, configuration and state, " +
	"+ the same floor requests as floor(op). It makes no API request, and its runs are counted into no request figure. " +
	"A provider that does no work already takes about 1.8-2x terraform_data's CPU in a no-op plan or refresh (bench/findings.md; Terraform " +
	"core's side of the plugin protocol: process starts, gRPC, msgpack, schema walks), so floor(op) on terraform_data is " +
	"out of reach of any plugin provider while this one is the least a plugin provider of these schemas can reach. " +
	"ratio to no-op floor = median provider wall time / no-op floor."

// queryFloorFormula is the query scenario's floor, stated when it was measured (with the
// Terraform that ran it).
const queryFloorFormula = "query = `terraform query -generate-config-out` (Terraform %s) of a list block per resource type " +
	"with limit N, in a working directory of its own with the provider's configuration and no state, after refresh-only: " +
	"every team's quota, and on the Kubernetes path its namespace. floor(query) = floor(refresh-only), the refresh of the " +
	"same objects; the query's own Terraform core work (no graph of N resources, but the generated configuration) is " +
	"not floored separately."

const spreadNote = "min-max over the runs (MAD in the JSON)"

// writeResults writes <dir>/<name>.md and <name>.json and returns their paths.
func writeResults(dir, name string, r *results) (string, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	md := filepath.Join(dir, name+".md")
	js := filepath.Join(dir, name+".json")
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

// sectionFlags are the flags of the sections beside the main one (shapes, the admission preview),
// as the run's command line gave them.
func sectionFlagsOf(st settings) string {
	if st.QueryOnly {
		return " -query-only" // no other section runs
	}
	flags := " -shapes-teams none"
	if len(st.ShapesTeams) > 0 {
		flags = fmt.Sprintf(" -shapes-teams %s -shapes %s", joinInts(st.ShapesTeams), strings.Join(st.Shapes, ","))
	}
	if st.ShapesOnly {
		flags += " -shapes-only"
	}
	previewTeams := "none"
	if len(st.PreviewTeams) > 0 {
		previewTeams = joinInts(st.PreviewTeams)
	}
	flags += " -preview-teams " + previewTeams
	if !st.PreviewBenchmark {
		flags += " -preview-benchmark=false"
	}
	if st.PreviewOnly {
		flags += " -preview-only"
	}

	return flags
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
	b.WriteString(".")
	kube, sm := slices.Contains(r.Settings.Paths, pathKubernetes), slices.Contains(r.Settings.Paths, pathSageMaker)
	if kube {
		fmt.Fprintf(&b, " Kubernetes path: local control plane, kube-apiserver %s and etcd %s on 127.0.0.1, Kueue %s CRDs, reached through the bench's counting proxy.",
			m.KubernetesVersion, m.EtcdVersion, m.KueueVersion)
	}
	if sm {
		b.WriteString(" SageMaker path: `task_governance` against the SageMaker API emulator (internal/sagemakeremulator) in the bench process, no Kubernetes connection; the emulator counts the calls.")
	}
	sectionFlags := sectionFlagsOf(r.Settings)
	fmt.Fprintf(&b, "\n\nStarted %s, finished %s. `make bench BENCH_FLAGS='-paths %s -teams %s -runs %d%s'`. Terraform default parallelism (10) unless a command says otherwise.",
		r.StartedAt, r.FinishedAt, strings.Join(r.Settings.Paths, ","), joinInts(r.Settings.Teams), r.Settings.Runs, sectionFlags)
	if kube {
		b.WriteString(" Per team on the Kubernetes path: one `hyperpod_team_namespace` and one `hyperpod_compute_quota` with three instance types.")
	}
	if sm {
		b.WriteString(" Per team on the SageMaker path: one `hyperpod_compute_quota` with three instance types (no namespace: the provider writes none without a Kubernetes connection).")
	}
	b.WriteString("\n\n")
	if r.Error != "" {
		fmt.Fprintf(&b, "**The run failed:** %s\n\n", codeBlockless(r.Error))
	}

	b.WriteString("Wall times are medians of the runs in seconds; spread is " + spreadNote + ". ")
	b.WriteString("Peak RSS is the largest resident set of the provider processes of a command (median over runs, MB = 10^6 bytes).\n\n")
	if kube {
		b.WriteString(floorFormula + "\n\n" + floorWhy + "\n\n")
	}
	if sm {
		b.WriteString(sagemakerFloorFormula + "\n\n")
	}
	b.WriteString(noopFloorFormula + "\n\n")
	if m.QueryTerraformVersion != "" {
		fmt.Fprintf(&b, queryFloorFormula+"\n\n", m.QueryTerraformVersion)
	}

	for _, tr := range r.TeamCounts {
		if tr.Path == pathSageMaker {
			renderSageMakerTeams(&b, tr)
		} else {
			renderKubernetesTeams(&b, tr)
		}
	}

	renderShapes(&b, r.Shapes)
	renderPreview(&b, r.Preview)

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

// column is one column of a per-operation table; numeric columns are right-aligned.
type column struct {
	head    string
	numeric bool
	value   func(*opResult) string
}

// The timing columns both paths share, around the SageMaker path's own.
var (
	timingColumns = []column{
		{"wall (s)", true, func(o *opResult) string { return fmt.Sprintf("%.2f", o.Wall.Median) }},
		{"spread (s)", true, func(o *opResult) string { return fmt.Sprintf("%.2f-%.2f", o.Wall.Min, o.Wall.Max) }},
		{"floor (s)", true, func(o *opResult) string { return seconds(o.Floor) }},
		{"ratio", true, func(o *opResult) string { return ratioText(o.Ratio) }},
		{"terraform_data (s)", true, func(o *opResult) string { return fmt.Sprintf("%.2f", o.TFDataWall.Median) }},
	}
	peakRSSColumn = column{"peak RSS (MB)", true, func(o *opResult) string { return fmt.Sprintf("%.1f", o.PeakRSSMB.Median) }}
)

// writeOpTable writes one row per operation; an operation that was not measured gets a row
// saying so in tables that list every operation, and none in the others.
func writeOpTable(b *strings.Builder, ops []*opResult, cols []column, listUnmeasured bool) {
	b.WriteString("| operation |")
	align := "|---|"
	for _, c := range cols {
		b.WriteString(" " + c.head + " |")
		if c.numeric {
			align += "---:|"
		} else {
			align += "---|"
		}
	}
	b.WriteString("\n" + align + "\n")
	for _, o := range ops {
		if o.Wall.N == 0 {
			if listUnmeasured {
				fmt.Fprintf(b, "| %s | not measured |%s\n", o.Op, strings.Repeat(" |", len(cols)-1))
			}
			continue
		}
		b.WriteString("| " + o.Op + " |")
		for _, c := range cols {
			b.WriteString(" " + c.value(o) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// writeNoopProviderLine says what the plan of new resources costs with the no-op provider.
func writeNoopProviderLine(b *strings.Builder, tr *teamResult) {
	if o := tr.op(opPlanNew); o != nil && o.NoopProviderWall.N > 0 {
		fmt.Fprintf(b, "plan-new with the no-op provider (internal/cmd/noopprovider: these schemas, every RPC answered "+
			"without work): %.2f s (spread %.2f-%.2f), %s its floor; the provider itself adds the other %.2f s.\n\n",
			o.NoopProviderWall.Median, o.NoopProviderWall.Min, o.NoopProviderWall.Max, ratioText(o.NoopProviderRatio),
			o.Wall.Median-o.NoopProviderWall.Median)
	}
}

// writeNoopProviderTable compares the commands also run with the no-op provider to both floors.
func writeNoopProviderTable(b *strings.Builder, tr *teamResult) {
	var ops []*opResult
	for _, o := range tr.Ops {
		if o.Wall.N > 0 && o.NoopProviderWall.N > 0 {
			ops = append(ops, o)
		}
	}
	if len(ops) == 0 {
		return
	}
	b.WriteString("The same commands with the no-op provider, against the no-op floor and the terraform_data floor:\n\n")
	writeOpTable(b, ops, []column{
		{"wall (s)", true, func(o *opResult) string { return fmt.Sprintf("%.2f", o.Wall.Median) }},
		{"no-op provider (s)", true, func(o *opResult) string { return fmt.Sprintf("%.2f", o.NoopProviderWall.Median) }},
		{"no-op spread (s)", true, func(o *opResult) string {
			return fmt.Sprintf("%.2f-%.2f", o.NoopProviderWall.Min, o.NoopProviderWall.Max)
		}},
		{"no-op floor (s)", true, func(o *opResult) string { return seconds(o.NoopProviderFloor) }},
		{"ratio to no-op floor", true, func(o *opResult) string { return ratioText(o.RatioToNoopProviderFloor) }},
		{"ratio to terraform_data floor", true, func(o *opResult) string { return ratioText(o.Ratio) }},
	}, false)
}

func renderKubernetesTeams(b *strings.Builder, tr *teamResult) {
	renderTeams(b, tr, teamsSection{
		path: "Kubernetes",
		timing: []column{
			{"sequential requests (s)", true, func(o *opResult) string { return seconds(o.Sequential.Median) }},
		},
		requestsIntro: "Requests per command (a range when the runs differ; list-continue is a further page of a LIST the provider pages 500 objects at a time):\n\n",
		requests: []column{
			{"total", true, func(o *opResult) string { return rangeText(o.Requests.Total) }},
			{"by verb", false, func(o *opResult) string { return rangeMap(o.Requests.ByVerb) }},
			{"by resource", false, func(o *opResult) string { return rangeMap(o.Requests.ByResource) }},
		},
	})
}

func renderSageMakerTeams(b *strings.Builder, tr *teamResult) {
	renderTeams(b, tr, teamsSection{
		path: "SageMaker",
		timing: []column{
			{"floor requests (s)", true, func(o *opResult) string { return seconds(o.Sequential.Median) }},
			{"poll bound (s)", true, func(o *opResult) string { return seconds(o.PollBound) }},
			{"ratio to floor + poll bound", true, func(o *opResult) string { return ratioText(o.RatioWithPoll) }},
		},
		requestsIntro: "Requests per command (a range when the runs differ) against the request floor:\n\n",
		requests: []column{
			{"requests", true, func(o *opResult) string { return rangeText(o.Requests.Total) }},
			{"floor", true, func(o *opResult) string { return fmt.Sprint(o.RequestFloorTotal) }},
			{"request ratio", true, func(o *opResult) string { return ratioText(o.RequestRatio) }},
			{"by operation", false, func(o *opResult) string { return rangeMap(o.Requests.ByOperation) }},
			{"floor by operation", false, func(o *opResult) string { return intMap(o.RequestFloor) }},
		},
	})
}

// teamsSection is what one path's section of a team count shows besides what every section does.
type teamsSection struct {
	path          string   // the path's name in the heading
	timing        []column // between timingColumns and peakRSSColumn
	requestsIntro string   // the line above the table of requests
	requests      []column
}

// renderTeams writes one path's section for one team count: the timings, the no-op provider's
// line and table, and the requests.
func renderTeams(b *strings.Builder, tr *teamResult, s teamsSection) {
	fmt.Fprintf(b, "## %s path: %d teams\n\n", s.path, tr.Teams)
	writeOpTable(b, tr.Ops, append(append(slices.Clone(timingColumns), s.timing...), peakRSSColumn), true)
	writeNoopProviderLine(b, tr)
	writeNoopProviderTable(b, tr)
	b.WriteString(s.requestsIntro)
	writeOpTable(b, tr.Ops, s.requests, false)
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

func intMap(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
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
