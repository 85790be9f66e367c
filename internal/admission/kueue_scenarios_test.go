package admission_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// The scenarios of the differential tests: a cohort of 2 to 4 teams whose ClusterQueues the
// provider's renderer writes from generated quota configurations, a few priority classes,
// jobs (batch Jobs and PyTorchJobs) submitted in a random order, jobs of some teams submitted
// last from a namespace that their ClusterQueue's namespaceSelector does not select (Kueue
// keeps them pending), and one quota change. Everything follows from the seed.

// The instance types of the scenarios: one with 8 GPUs per instance and one with 1, both
// used by no other acceptance test, so their ResourceFlavors are the differential tests' own.
const (
	bigGPU   = "ml.g5.48xlarge"
	smallGPU = "ml.g6.16xlarge"
)

// scenario is one seed's cohort, jobs and change.
type scenario struct {
	seed   uint64
	cohort string
	// teams are the quota configurations before the change, in team order.
	teams   []quota.Config
	classes []quota.PriorityClass
	// jobs are submitted in this order.
	jobs   []jobSpec
	change change
}

// jobSpec is one job a data scientist submits.
type jobSpec struct {
	team, name string
	// pytorch makes a PyTorchJob (a Master and Workers) instead of a batch Job.
	pytorch      bool
	instanceType string
	// replicas are the pods: one entry per pod set (a Job has one).
	replicas []replicaSpec
	// class is the priority class's name ("" for none).
	class string
	// outside submits it from the team's outside namespace, which the team's ClusterQueue
	// does not select.
	outside bool
}

// replicaSpec is a pod set: count pods of gpus GPUs each (with cpu and memory in proportion).
type replicaSpec struct {
	role  string
	count int64
	gpus  int64
}

// change is a quota change: the configurations after it (nil for a deleted team's) and what
// it is, in words.
type change struct {
	what  string
	after []*quota.Config
}

// teamName is the name of team i of a seed: short, so that every derived name stays valid.
func teamName(seed uint64, i int) string { return fmt.Sprintf("d%d-%c", seed, 'a'+i) }

// generate builds the scenario of a seed.
func generate(seed uint64) scenario {
	// Mixed, so that neighbouring seeds start the generator far apart.
	r := rand.New(rand.NewPCG(seed*0x9e3779b97f4a7c15, seed^0x6b75657565))
	sc := scenario{seed: seed, cohort: fmt.Sprintf("diff-%d", seed)}
	for i := range 3 {
		sc.classes = append(sc.classes, quota.PriorityClass{Name: fmt.Sprintf("d%d-p%d", seed, i), Weight: int64(1 + r.IntN(100))})
	}
	nTeams := 2 + r.IntN(3)
	for i := range nTeams {
		sc.teams = append(sc.teams, generateTeam(r, teamName(seed, i), sc.cohort))
	}
	for i, cfg := range sc.teams {
		for j := range 2 + r.IntN(5) {
			sc.jobs = append(sc.jobs, generateJob(r, cfg, fmt.Sprintf("j%d-%d", i, j), sc.classes))
		}
	}
	r.Shuffle(len(sc.jobs), func(i, j int) { sc.jobs[i], sc.jobs[j] = sc.jobs[j], sc.jobs[i] })
	sc.change = generateChange(r, sc.teams)
	// Drawn from a generator of their own, so that the rest of a seed's scenario stays as it was.
	ro := rand.New(rand.NewPCG(seed, 0x6f757473696465))
	for i, cfg := range sc.teams {
		if ro.IntN(2) == 0 {
			j := generateJob(ro, cfg, fmt.Sprintf("o%d", i), sc.classes)
			j.outside = true
			sc.jobs = append(sc.jobs, j)
		}
	}
	return sc
}

func pick[T any](r *rand.Rand, values ...T) T { return values[r.IntN(len(values))] }

// generateTeam is a team's quota: GPUs on one or both instance types, a sharing strategy with
// its limits, a fair-share weight and a preemption policy.
func generateTeam(r *rand.Rand, team, cohort string) quota.Config {
	cfg := quota.Config{Name: team, Team: team, Cohort: ptr.To(cohort),
		FairShareWeight:  pick[int64](r, 1, 1, 10, 50, 100, 0),
		PreemptTeamTasks: ptr.To(pick(r, quota.PreemptLowerPriority, quota.PreemptLowerPriority, quota.PreemptNever))}
	cfg.Resources = append(cfg.Resources, quota.Entry{InstanceType: bigGPU, Accelerators: ptr.To(pick[int64](r, 0, 4, 8, 8, 16))})
	if r.IntN(3) == 0 {
		cfg.Resources = append(cfg.Resources, quota.Entry{InstanceType: smallGPU, Count: ptr.To(pick[int64](r, 0, 1, 2, 4))})
	}
	if r.IntN(6) == 0 {
		cfg.ActivationState = ptr.To(quota.ActivationDisabled)
	}
	strategy := pick(r, quota.StrategyLendAndBorrow, quota.StrategyLendAndBorrow, quota.StrategyLend, quota.StrategyDontLend)
	cfg.Sharing.Strategy = &strategy
	if strategy == quota.StrategyLendAndBorrow && r.IntN(3) > 0 {
		cfg.Sharing.BorrowLimit = ptr.To(pick[int64](r, 0, 100, 200, 400))
	}
	return cfg
}

// generateJob is a job of a team on an instance type the team has a quota of (Kueue admits
// it only in a flavor of the team's ClusterQueue, even when borrowing): mostly on the 8-GPU
// type, a quarter of them PyTorchJobs.
func generateJob(r *rand.Rand, cfg quota.Config, name string, classes []quota.PriorityClass) jobSpec {
	j := jobSpec{team: cfg.Team, name: name, instanceType: bigGPU}
	if len(cfg.Resources) > 1 && r.IntN(3) == 0 {
		j.instanceType = smallGPU
	}
	gpus := func() int64 {
		if j.instanceType == smallGPU {
			return 1
		}
		return pick[int64](r, 1, 2, 2, 4, 4, 8)
	}
	if r.IntN(4) == 0 {
		j.pytorch = true
		j.replicas = []replicaSpec{{role: "Master", count: 1, gpus: gpus()}, {role: "Worker", count: 1 + r.Int64N(2), gpus: gpus()}}
	} else {
		j.replicas = []replicaSpec{{role: "main", count: 1 + r.Int64N(2), gpus: gpus()}}
	}
	if r.IntN(5) > 0 {
		j.class = classes[r.IntN(len(classes))].Name
	}
	return j
}

// generateChange picks a change of one team's quota, or of two teams' quotas at once (a plan
// that changes several): an amount raised or lowered, the sharing strategy or borrow limit,
// the weight, the preemption policy, the activation, or the quota deleted. Raises, sharing
// changes and activations are the likeliest, as they are what moves admitted work: Kueue
// preempts only for a pending workload that the change lets in.
func generateChange(r *rand.Rand, teams []quota.Config) change {
	after := make([]*quota.Config, len(teams))
	for j := range teams {
		c := teams[j].Clone()
		after[j] = &c
	}
	var what []string
	for _, i := range r.Perm(len(teams))[:1+r.IntN(2)] {
		var w string
		w, after[i] = changeTeam(r, teams[i])
		what = append(what, w)
	}
	return change{what: strings.Join(what, "; "), after: after}
}

// changeTeam changes one team's quota; nil is a deleted quota.
func changeTeam(r *rand.Rand, before quota.Config) (string, *quota.Config) {
	cfg := before.Clone()
	team := cfg.Team
	gpus := *cfg.Resources[0].Accelerators
	disabled := cfg.ActivationState != nil && *cfg.ActivationState == quota.ActivationDisabled
	kind := pick(r, "raise", "raise", "raise", "lower", "strategy", "strategy", "borrow", "borrow", "weight", "preempt",
		"activation", "delete")
	if disabled && r.IntN(2) == 0 {
		kind = "activation"
	}
	switch kind {
	case "raise", "lower":
		to := gpus + pick[int64](r, 4, 8, 16)
		if kind == "lower" {
			to = gpus / 2
		}
		cfg.Resources[0].Accelerators = ptr.To(to)
		return fmt.Sprintf("%s: %s accelerators %d -> %d", team, bigGPU, gpus, to), &cfg
	case "strategy":
		from := *cfg.Sharing.Strategy
		to := pick(r, quota.StrategyLendAndBorrow, quota.StrategyLend, quota.StrategyDontLend)
		if to == from {
			to = quota.StrategyDontLend
			if from == quota.StrategyDontLend {
				to = quota.StrategyLendAndBorrow
			}
		}
		cfg.Sharing.Strategy, cfg.Sharing.BorrowLimit = ptr.To(to), nil
		return fmt.Sprintf("%s: resource_sharing.strategy %s -> %s", team, from, to), &cfg
	case "borrow":
		to := pick[int64](r, 0, 10, 100, 300, 1000)
		cfg.Sharing.Strategy, cfg.Sharing.BorrowLimit = ptr.To(quota.StrategyLendAndBorrow), ptr.To(to)
		return fmt.Sprintf("%s: resource_sharing = LendAndBorrow, borrow_limit %d", team, to), &cfg
	case "weight":
		to := pick[int64](r, 0, 1, 100)
		if to == cfg.FairShareWeight {
			to = 50
		}
		cfg.FairShareWeight = to
		return fmt.Sprintf("%s: fair_share_weight %d -> %d", team, before.FairShareWeight, to), &cfg
	case "preempt":
		to := quota.PreemptNever
		if *cfg.PreemptTeamTasks == quota.PreemptNever {
			to = quota.PreemptLowerPriority
		}
		cfg.PreemptTeamTasks = ptr.To(to)
		return fmt.Sprintf("%s: preempt_team_tasks %s -> %s", team, *before.PreemptTeamTasks, to), &cfg
	case "activation":
		from, to := quota.ActivationEnabled, quota.ActivationDisabled
		if disabled {
			from, to = to, from
		}
		cfg.ActivationState = ptr.To(to)
		return fmt.Sprintf("%s: activation_state %s -> %s", team, from, to), &cfg
	default:
		return fmt.Sprintf("%s: quota deleted", team), nil
	}
}

// renderQueues renders the ClusterQueues of configurations, as the provider writes them;
// nil configurations (deleted teams) are skipped.
func renderQueues(cfgs []*quota.Config) ([]kueue.ClusterQueue, error) {
	cat := catalog.Builtin()
	var out []kueue.ClusterQueue
	for _, cfg := range cfgs {
		if cfg == nil {
			continue
		}
		rc, problems := quota.Plan(cat, *cfg)
		if len(problems) > 0 {
			return nil, fmt.Errorf("team %s: the generated quota is invalid: %v", cfg.Team, problems)
		}
		cq, err := quota.RenderClusterQueue(cat, rc)
		if err != nil {
			return nil, err
		}
		out = append(out, cq)
	}
	return out, nil
}

// configs returns pointers to a scenario's configurations before the change.
func (sc scenario) configs() []*quota.Config {
	out := make([]*quota.Config, len(sc.teams))
	for i := range sc.teams {
		out[i] = &sc.teams[i]
	}
	return out
}

// queues is the scenario's settle scope.
func (sc scenario) queues() scenarioQueues {
	sq := scenarioQueues{probeClass: probeClassName, jobs: len(sc.jobs)}
	for _, cfg := range sc.teams {
		sq.teams = append(sq.teams, cfg.Team)
	}
	return sq
}

// String describes the scenario in a failure: its teams' quotas, the jobs in order, the change.
func (sc scenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, cohort %s\n", sc.seed, sc.cohort)
	for _, c := range sc.classes {
		fmt.Fprintf(&b, "  priority class %s = %d\n", quota.PriorityClassObjectName(c.Name), c.Weight)
	}
	for _, cfg := range sc.teams {
		fmt.Fprintf(&b, "  team %s: %s weight %d preempt %s", cfg.Team, *cfg.Sharing.Strategy, cfg.FairShareWeight, *cfg.PreemptTeamTasks)
		if cfg.ActivationState != nil {
			fmt.Fprintf(&b, " %s", *cfg.ActivationState)
		}
		if cfg.Sharing.BorrowLimit != nil {
			fmt.Fprintf(&b, " borrow_limit %d", *cfg.Sharing.BorrowLimit)
		}
		for _, e := range cfg.Resources {
			switch {
			case e.Accelerators != nil:
				fmt.Fprintf(&b, ", %s accelerators %d", e.InstanceType, *e.Accelerators)
			case e.Count != nil:
				fmt.Fprintf(&b, ", %s count %d", e.InstanceType, *e.Count)
			}
		}
		b.WriteString("\n")
	}
	for _, j := range sc.jobs {
		kind := "Job"
		if j.pytorch {
			kind = "PyTorchJob"
		}
		var pods []string
		for _, rs := range j.replicas {
			pods = append(pods, fmt.Sprintf("%s %dx%d GPU", rs.role, rs.count, rs.gpus))
		}
		class := j.class
		if class == "" {
			class = "no class"
		}
		if j.outside {
			class += ", from the outside namespace"
		}
		fmt.Fprintf(&b, "  %s %s/%s on %s: %s, %s\n", kind, j.team, j.name, j.instanceType, strings.Join(pods, ", "), class)
	}
	fmt.Fprintf(&b, "  change: %s", sc.change.what)
	return b.String()
}

// The generator is deterministic per seed and makes only what the provider can write: every
// seed's quotas, before and after the change, pass quota.Plan and render, and every job asks
// for an instance type its team has a quota of.
func TestDifferentialScenarios(t *testing.T) {
	kinds := map[string]int{}
	for seed := uint64(1); seed <= 300; seed++ {
		sc := generate(seed)
		if again := generate(seed); again.String() != sc.String() {
			t.Fatalf("seed %d generates two different scenarios:\n%s\n---\n%s", seed, sc, again)
		}
		if _, err := renderQueues(sc.configs()); err != nil {
			t.Fatalf("seed %d, before the change: %v", seed, err)
		}
		if _, err := renderQueues(sc.change.after); err != nil {
			t.Fatalf("seed %d, after the change (%s): %v", seed, sc.change.what, err)
		}
		for _, j := range sc.jobs {
			i := slices.IndexFunc(sc.teams, func(c quota.Config) bool { return c.Team == j.team })
			if i < 0 || !slices.ContainsFunc(sc.teams[i].Resources, func(e quota.Entry) bool { return e.InstanceType == j.instanceType }) {
				t.Errorf("seed %d: job %s/%s asks for %s, which its team has no quota of", seed, j.team, j.name, j.instanceType)
			}
		}
		for _, what := range strings.Split(sc.change.what, "; ") {
			_, change, _ := strings.Cut(what, ": ")
			kind, _, _ := strings.Cut(change, " ")
			kinds[kind]++
		}
	}
	// The seeds make test runs on each Kueue submit jobs from an outside namespace.
	for _, last := range []uint64{3, 8} {
		outside := 0
		for seed := uint64(1); seed <= last; seed++ {
			for _, j := range generate(seed).jobs {
				if j.outside {
					outside++
				}
			}
		}
		if outside == 0 {
			t.Errorf("seeds 1-%d submit no job from an outside namespace", last)
		}
	}
	// Every kind of change is generated.
	for _, kind := range []string{bigGPU, "resource_sharing.strategy", "resource_sharing", "fair_share_weight", "preempt_team_tasks",
		"activation_state", "quota"} {
		if kinds[kind] == 0 {
			t.Errorf("no seed changes %s; generated: %v", kind, kinds)
		}
	}
}
