package main

// Measured operations, in the order each run performs them.
const (
	opPlanNew     = "plan-new"     // terraform plan against an empty state
	opApply       = "apply"        // terraform apply -auto-approve from empty
	opPlanNoop    = "plan-noop"    // terraform plan, nothing changed
	opPlanChanged = "plan-changed" // terraform plan after one quota was changed
	opRefreshOnly = "refresh-only" // terraform apply -refresh-only -auto-approve
	opDestroy     = "destroy"      // terraform destroy -auto-approve
	// opRefreshTagged is refresh-only with a tag on every quota (the SageMaker path only: a
	// refresh reads a quota's tags, one ListTags each, only where its state holds some).
	opRefreshTagged = "refresh-only-tagged"
	// opQuery is terraform query -generate-config-out of every team's quota (and namespace, on the
	// Kubernetes path) from an empty state, after refresh-only: what adopting the teams writes.
	// Terraform 1.14 or later (-query-terraform); its floor is refresh-only's, the same objects.
	opQuery = "query"
)

var operations = []string{opPlanNew, opApply, opPlanNoop, opPlanChanged, opRefreshOnly, opQuery, opDestroy}

// noopProviderOps are the commands also run with the no-op provider, right after the provider's,
// in the same working directory and state: the plan of new resources and the read commands.
// Apply and destroy are not: the no-op provider writes nothing.
var noopProviderOps = []string{opPlanNew, opPlanNoop, opPlanChanged, opRefreshOnly, opRefreshTagged}

// sagemakerReadOps are the SageMaker path's read commands.
var sagemakerReadOps = []string{opPlanNoop, opPlanChanged, opRefreshOnly, opRefreshTagged}

// runSample is one operation in one run.
type runSample struct {
	WallSeconds       float64        `json:"wall_seconds"`
	CPUSeconds        float64        `json:"cpu_seconds,omitempty"` // Terraform's and its providers' user + system time
	PeakRSSBytes      int64          `json:"peak_rss_bytes,omitempty"`
	ProviderProcesses int            `json:"provider_processes,omitempty"`
	Requests          *requestCounts `json:"requests,omitempty"`
	Replay            *replayResult  `json:"sequential_replay,omitempty"`
	// NoopProviderSeconds and NoopProviderCPUSeconds are the same command with the no-op
	// provider (noopProviderOps only).
	NoopProviderSeconds    float64 `json:"noop_provider_seconds,omitempty"`
	NoopProviderCPUSeconds float64 `json:"noop_provider_cpu_seconds,omitempty"`
}

// countRange is the smallest and largest count over the runs.
type countRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// requestSummary is requestCounts over several runs.
type requestSummary struct {
	Total          countRange            `json:"total"`
	Failed         countRange            `json:"failed"`
	ByVerb         map[string]countRange `json:"by_verb"`
	ByResource     map[string]countRange `json:"by_resource"`
	ByVerbResource map[string]countRange `json:"by_verb_resource"`
	ByOperation    map[string]countRange `json:"by_operation,omitempty"`
}

func summarizeRequests(runs []requestCounts) requestSummary {
	s := requestSummary{ByVerb: map[string]countRange{}, ByResource: map[string]countRange{}, ByVerbResource: map[string]countRange{},
		ByOperation: map[string]countRange{}}
	if len(runs) == 0 {
		return s
	}
	merge := func(dst map[string]countRange, pick func(requestCounts) map[string]int) {
		keys := map[string]bool{}
		for _, r := range runs {
			for k := range pick(r) {
				keys[k] = true
			}
		}
		for k := range keys {
			var vals []int
			for _, r := range runs {
				vals = append(vals, pick(r)[k])
			}
			dst[k] = rangeOf(vals)
		}
	}
	merge(s.ByVerb, func(c requestCounts) map[string]int { return c.ByVerb })
	merge(s.ByResource, func(c requestCounts) map[string]int { return c.ByResource })
	merge(s.ByVerbResource, func(c requestCounts) map[string]int { return c.ByVerbResource })
	merge(s.ByOperation, func(c requestCounts) map[string]int { return c.ByOperation })
	var totals, failed []int
	for _, r := range runs {
		totals, failed = append(totals, r.Total), append(failed, r.Failed)
	}
	s.Total, s.Failed = rangeOf(totals), rangeOf(failed)
	return s
}

func rangeOf(vals []int) countRange {
	r := countRange{Min: vals[0], Max: vals[0]}
	for _, v := range vals[1:] {
		r.Min, r.Max = min(r.Min, v), max(r.Max, v)
	}
	return r
}

// opResult is one operation at one team count: the runs and what they add up to.
type opResult struct {
	Op            string      `json:"operation"`
	Provider      []runSample `json:"provider_runs"`
	TerraformData []runSample `json:"terraform_data_runs"`

	Wall       summary        `json:"wall_seconds"`
	TFDataWall summary        `json:"terraform_data_wall_seconds"`
	Sequential summary        `json:"sequential_requests_seconds"`
	Floor      float64        `json:"floor_seconds"` // TFDataWall.Median + Sequential.Median
	Ratio      float64        `json:"ratio"`         // Wall.Median / Floor
	PeakRSSMB  summary        `json:"peak_rss_mb"`   // 10^6 bytes
	Requests   requestSummary `json:"requests"`

	// The SageMaker path's request floor (sagemakerRequestFloor) and the least time its waiters
	// sleep (pollBound).
	RequestFloor      map[string]int `json:"request_floor,omitempty"`
	RequestFloorTotal int            `json:"request_floor_total,omitempty"`
	RequestRatio      float64        `json:"request_ratio,omitempty"` // Requests.Total.Max / RequestFloorTotal
	PollBound         float64        `json:"poll_bound_seconds,omitempty"`
	RatioWithPoll     float64        `json:"ratio_with_poll_bound,omitempty"` // Wall.Median / (Floor + PollBound)

	// The command with the no-op provider (noopProviderOps), and its ratio to the floor.
	NoopProviderWall  summary `json:"noop_provider_wall_seconds,omitzero"`
	NoopProviderRatio float64 `json:"noop_provider_ratio,omitempty"`
	// The no-op provider's floor: its median wall time + the floor's requests (Sequential), the
	// least any plugin provider of these schemas can reach; and the provider's ratio to it.
	NoopProviderFloor        float64 `json:"noop_provider_floor_seconds,omitempty"`
	RatioToNoopProviderFloor float64 `json:"ratio_to_noop_provider_floor,omitempty"`
}

// finish computes the summaries from the runs.
func (o *opResult) finish() {
	var wall, tfd, seq, rss, noop []float64
	var reqs []requestCounts
	for _, s := range o.Provider {
		wall = append(wall, s.WallSeconds)
		if s.NoopProviderSeconds > 0 {
			noop = append(noop, s.NoopProviderSeconds)
		}
		rss = append(rss, float64(s.PeakRSSBytes)/1e6)
		if s.Requests != nil {
			reqs = append(reqs, *s.Requests)
		}
		if s.Replay != nil {
			seq = append(seq, s.Replay.Seconds)
		}
	}
	for _, s := range o.TerraformData {
		tfd = append(tfd, s.WallSeconds)
	}
	o.Wall, o.TFDataWall, o.Sequential, o.PeakRSSMB = summarize(wall), summarize(tfd), summarize(seq), summarize(rss)
	o.Requests = summarizeRequests(reqs)
	o.NoopProviderWall = summarize(noop)
	o.Floor, o.Ratio, o.NoopProviderRatio = 0, 0, 0
	o.NoopProviderFloor, o.RatioToNoopProviderFloor = 0, 0
	if o.NoopProviderWall.N > 0 {
		o.NoopProviderFloor = o.NoopProviderWall.Median + o.Sequential.Median
		o.RatioToNoopProviderFloor = ratio(o.Wall.Median, o.NoopProviderFloor)
	}
	if o.TFDataWall.N > 0 {
		o.Floor = o.TFDataWall.Median + o.Sequential.Median
		o.Ratio = ratio(o.Wall.Median, o.Floor)
		if o.NoopProviderWall.N > 0 {
			o.NoopProviderRatio = ratio(o.NoopProviderWall.Median, o.Floor)
		}
	}
}

// teamResult holds every operation at one team count on one path.
type teamResult struct {
	Path  string      `json:"path"`
	Teams int         `json:"teams"`
	Ops   []*opResult `json:"operations"`
}

// finish computes the summaries of every operation, and on the SageMaker path their request
// floors. The query's floor is refresh-only's.
func (t *teamResult) finish() {
	for _, o := range t.Ops {
		o.finish()
		if refresh := t.op(opRefreshOnly); o.Op == opQuery && refresh != nil && o.Wall.N > 0 {
			refresh.finish()
			o.Floor, o.Ratio = refresh.Floor, ratio(o.Wall.Median, refresh.Floor)
		}
		if t.Path != pathSageMaker {
			continue
		}
		o.RequestFloor = sagemakerRequestFloor(o.Op, t.Teams)
		o.RequestFloorTotal = 0
		for _, v := range o.RequestFloor {
			o.RequestFloorTotal += v
		}
		o.RequestRatio = ratio(float64(o.Requests.Total.Max), float64(o.RequestFloorTotal))
		o.PollBound = pollBound(o.Op, t.Teams)
		o.RatioWithPoll = 0
		if o.PollBound > 0 && o.Floor > 0 {
			o.RatioWithPoll = ratio(o.Wall.Median, o.Floor+o.PollBound)
		}
	}
}

func newTeamResult(path string, n int) *teamResult {
	t := &teamResult{Path: path, Teams: n}
	for _, op := range operations {
		t.Ops = append(t.Ops, &opResult{Op: op})
	}
	return t
}

func (t *teamResult) op(name string) *opResult {
	for _, o := range t.Ops {
		if o.Op == name {
			return o
		}
	}
	return nil
}

// results is everything one `make bench` produced; the JSON file is this struct.
type results struct {
	Date       string          `json:"date"`
	StartedAt  string          `json:"started_at"`
	FinishedAt string          `json:"finished_at"`
	Machine    machineInfo     `json:"machine"`
	Settings   settings        `json:"settings"`
	TeamCounts []*teamResult   `json:"team_counts"`
	Shapes     []*shapeResult  `json:"workspace_shapes,omitempty"`
	Preview    *previewResults `json:"admission_preview,omitempty"`
	Targets    []targetResult  `json:"targets"`
	Notes      []string        `json:"notes,omitempty"`
	Findings   string          `json:"findings,omitempty"`
	Error      string          `json:"error,omitempty"`
}

type settings struct {
	Paths             []string `json:"paths"`
	Teams             []int    `json:"teams"`
	Runs              int      `json:"runs"`
	MaxListsPerKind   int      `json:"max_lists_per_kind"`
	Parallelism       string   `json:"parallelism"`
	Spread            string   `json:"spread"`
	Floor             string   `json:"floor"`
	NoopProviderFloor string   `json:"noop_provider_floor"`
	ShapesTeams       []int    `json:"shapes_teams,omitempty"`
	Shapes            []string `json:"shapes,omitempty"`
	ShapesOnly        bool     `json:"shapes_only,omitempty"`
	PreviewTeams      []int    `json:"preview_teams,omitempty"`
	PreviewBenchmark  bool     `json:"preview_benchmark"`
	PreviewOnly       bool     `json:"preview_only,omitempty"`
	QueryOnly         bool     `json:"query_only,omitempty"`
}

func (r *results) team(path string, n int) *teamResult {
	for _, t := range r.TeamCounts {
		if t.Path == path && t.Teams == n {
			return t
		}
	}
	return nil
}
