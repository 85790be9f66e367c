package admission_test

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
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

// probeClassName is the WorkloadPriorityClass of the settle probes: below every scenario
// priority (the classes' weights are 1-100 and a job without a class has 0).
const probeClassName = "differential-settle-probe"

// ensureCommon creates what every scenario shares, when missing: the instance types'
// ResourceFlavors and the probes' priority class. It returns a cleanup that deletes what it
// created.
func (k kueueCluster) ensureCommon(ctx context.Context) (cleanup func(context.Context) error, err error) {
	var created []func(context.Context) error
	cleanup = func(ctx context.Context) error {
		for _, del := range slices.Backward(created) {
			if err := del(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	for _, it := range []string{bigGPU, smallGPU} {
		rf := acctest.MakeResourceFlavor(it).Unstructured()
		if _, err := k.dyn.Resource(kueue.ResourceFlavors).Create(ctx, rf, metav1.CreateOptions{}); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return cleanup, fmt.Errorf("creating ResourceFlavor %s: %w", it, err)
		}
		created = append(created, func(ctx context.Context) error {
			return k.deleteAndWait(ctx, kueue.ResourceFlavors, "", it)
		})
	}
	wpc := acctest.MakeWorkloadPriorityClass(probeClassName).Value(-1).Unstructured()
	if _, err := k.dyn.Resource(kueue.WorkloadPriorityClasses).Create(ctx, wpc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return cleanup, fmt.Errorf("creating WorkloadPriorityClass %s: %w", probeClassName, err)
	}
	created = append(created, func(ctx context.Context) error {
		return k.deleteAndWait(ctx, kueue.WorkloadPriorityClasses, "", probeClassName)
	})
	return cleanup, nil
}

// create creates the scenario's priority classes, team namespaces (each with its LocalQueue,
// and a probe namespace and an outside namespace feeding the same ClusterQueue) and
// ClusterQueues.
func (k kueueCluster) create(ctx context.Context, sc scenario) error {
	for _, c := range sc.classes {
		wpc := quota.RenderPriorityClass(c, "")
		if err := k.createTyped(ctx, kueue.WorkloadPriorityClasses, "", &wpc); err != nil {
			return err
		}
	}
	queues, err := renderQueues(sc.configs())
	if err != nil {
		return err
	}
	for _, cfg := range sc.teams {
		team := cfg.Team
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: quota.NamespaceName(team), Labels: quota.NamespaceLabels(team)}}
		probe := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNamespace(team)}}
		outside := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: outsideNamespace(team)}}
		for _, n := range []*corev1.Namespace{ns, probe, outside} {
			if _, err := k.cs.CoreV1().Namespaces().Create(ctx, n, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating namespace %s: %w", n.Name, err)
			}
			lq := quota.RenderLocalQueue(team, "")
			lq.Namespace = n.Name
			if err := k.createTyped(ctx, kueue.LocalQueues, n.Name, &lq); err != nil {
				return err
			}
		}
	}
	for i := range queues {
		if err := k.createTyped(ctx, kueue.ClusterQueues, "", &queues[i]); err != nil {
			return err
		}
	}
	return k.waitClusterQueuesObserved(ctx, sc.queues().teams)
}

func (k kueueCluster) createTyped(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj any) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	if _, err := k.dyn.Resource(gvr).Namespace(namespace).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// submit creates the scenario's jobs in order.
func (k kueueCluster) submit(ctx context.Context, jobs []jobSpec) error {
	for _, j := range jobs {
		if err := k.submitJob(ctx, j); err != nil {
			return err
		}
	}
	return nil
}

// podRequests are one pod's requests: its GPUs, 4 vCPU and 16 GiB per GPU (less than either
// instance type's share per GPU, so the GPUs decide).
func podRequests(gpus int64) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:        *k8sresource.NewQuantity(4*gpus, k8sresource.DecimalSI),
		corev1.ResourceMemory:     *k8sresource.NewQuantity(16*gpus<<30, k8sresource.BinarySI),
		catalog.ResourceNvidiaGPU: *k8sresource.NewQuantity(gpus, k8sresource.DecimalSI),
	}
}

func (k kueueCluster) submitJob(ctx context.Context, j jobSpec) error {
	ns := quota.NamespaceName(j.team)
	if j.outside {
		ns = outsideNamespace(j.team)
	}
	if j.pytorch {
		w := acctest.MakePyTorchJob(j.name, ns).Queue(quota.LocalQueueName(j.team))
		if j.class != "" {
			w.PriorityClass(quota.PriorityClassObjectName(j.class))
		}
		for _, rs := range j.replicas {
			w.Replicas(rs.role, rs.count, j.instanceType, podRequests(rs.gpus))
		}
		if _, err := k.dyn.Resource(pytorchJobs).Namespace(ns).Create(ctx, w.Unstructured(), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating PyTorchJob %s/%s: %w", ns, j.name, err)
		}
		return nil
	}
	labels := map[string]string{"kueue.x-k8s.io/queue-name": quota.LocalQueueName(j.team)}
	if j.class != "" {
		labels[kueue.PriorityClassLabel] = quota.PriorityClassObjectName(j.class)
	}
	rs := j.replicas[0]
	req := podRequests(rs.gpus)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{
			Suspend:     ptr.To(true),
			Parallelism: ptr.To(int32(rs.count)),
			Completions: ptr.To(int32(rs.count)),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				NodeSelector:  map[string]string{quota.LabelInstanceType: j.instanceType},
				Containers: []corev1.Container{{Name: "main", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: req,
						Limits: corev1.ResourceList{catalog.ResourceNvidiaGPU: req[catalog.ResourceNvidiaGPU]}}}},
			}},
		},
	}
	if _, err := k.cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Job %s/%s: %w", ns, j.name, err)
	}
	return nil
}

// applyChange writes the planned ClusterQueues over the live ones, as the provider's apply
// does (server-side apply), and deletes those planned as being deleted; then it waits until
// Kueue has taken the new specs in.
func (k kueueCluster) applyChange(ctx context.Context, sc scenario, planned []kueue.ClusterQueue) error {
	for i := range planned {
		name := planned[i].Name
		if planned[i].DeletionTimestamp != nil {
			if err := k.dyn.Resource(kueue.ClusterQueues).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				return fmt.Errorf("deleting ClusterQueue %s: %w", name, err)
			}
			continue
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&planned[i])
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: content}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		if _, err := k.dyn.Resource(kueue.ClusterQueues).Apply(ctx, name, u,
			metav1.ApplyOptions{FieldManager: quota.FieldManager, Force: true}); err != nil {
			return fmt.Errorf("applying ClusterQueue %s: %w", name, err)
		}
	}
	return k.waitClusterQueuesObserved(ctx, sc.queues().teams)
}

// cleanup deletes everything of a scenario and waits until it is gone: jobs and Workloads
// first (so Kueue releases the quota and the ClusterQueues' finalizers go), then the
// ClusterQueues, namespaces and priority classes. Objects already gone are no error, so it
// also clears what an earlier, interrupted run of the seed left.
func (k kueueCluster) cleanup(ctx context.Context, sc scenario) error {
	for _, cfg := range sc.teams {
		for _, ns := range []string{quota.NamespaceName(cfg.Team), probeNamespace(cfg.Team), outsideNamespace(cfg.Team)} {
			if err := k.deleteJobsAndWorkloads(ctx, ns); err != nil {
				return err
			}
		}
	}
	for _, cfg := range sc.teams {
		if err := k.deleteAndWait(ctx, kueue.ClusterQueues, "", quota.ClusterQueueName(cfg.Team)); err != nil {
			return err
		}
		for _, ns := range []string{quota.NamespaceName(cfg.Team), probeNamespace(cfg.Team), outsideNamespace(cfg.Team)} {
			if err := k.deleteAndWait(ctx, namespaces, "", ns); err != nil {
				return err
			}
		}
	}
	for _, c := range sc.classes {
		if err := k.deleteAndWait(ctx, kueue.WorkloadPriorityClasses, "", quota.PriorityClassObjectName(c.Name)); err != nil {
			return err
		}
	}
	return nil
}

// deleteAndWait deletes an object and waits until it is gone.
func (k kueueCluster) deleteAndWait(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) error {
	ri := k.dyn.Resource(gvr).Namespace(namespace)
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", gvr.Resource, name, err)
	}
	return acctest.Eventually(ctx, observeTimeout, fmt.Sprintf("%s %s is gone", gvr.Resource, name), func(context.Context) (bool, string, error) {
		_, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "still there", err
	})
}

// differentialSeeds are the seeds a run tries: HYPERPOD_DIFFERENTIAL_SEEDS, a count N (seeds
// 1 to N) or a range "A-B", else a sample sized for make test on the running Kueue (the older
// one runs slower here, so it gets fewer).
func differentialSeeds(t *testing.T, version admission.Version) []uint64 {
	first, last := uint64(1), uint64(8)
	if version == admission.V0_15 {
		last = 3
	}
	if v := os.Getenv(envDifferentialSeeds); v != "" {
		a, b, isRange := strings.Cut(v, "-")
		var err1, err2 error
		first, err1 = strconv.ParseUint(a, 10, 64)
		last = first
		if isRange {
			last, err2 = strconv.ParseUint(b, 10, 64)
		} else {
			first = 1
		}
		if err1 != nil || err2 != nil || first < 1 || last < first {
			t.Fatalf("%s=%q: want a number of seeds (N, for seeds 1 to N) or a range of seeds (A-B, 1 <= A <= B)", envDifferentialSeeds, v)
		}
	}
	var seeds []uint64
	for s := first; s <= last; s++ {
		seeds = append(seeds, s)
	}
	return seeds
}

// envDifferentialSeeds picks the seeds of the differential test (make test-all sets many).
const envDifferentialSeeds = "HYPERPOD_DIFFERENTIAL_SEEDS"

// runningKueue is the Kueue release of the control plane the tests run against: the release
// of its assets (scripts/test.sh starts each phase's cluster from the assets it names in
// HYPERPOD_CONTROLPLANE_DIR), else HYPERPOD_KUEUE_VERSION's.
func runningKueue(t *testing.T) (string, admission.Version) {
	release := localcluster.KueueVersionFromEnv()
	if dir, err := localcluster.AssetsDirFromEnv(); err == nil {
		if v := localcluster.KueueVersionOf(dir); v != "" {
			release = v
		}
	}
	version, err := admission.ParseVersion(release)
	if err != nil {
		t.Fatal(err)
	}
	return release, version
}

// tally counts the predictions of a run: one per workload of each seed (its fate after the
// change), and one per flavor-resource a ClusterQueue ends up using over its nominal quota.
type tally struct {
	seeds, workloads           int
	right, wrong, undetermined int
	failing                    []uint64
}

func (ty *tally) String() string {
	return fmt.Sprintf("%d seeds, %d workloads; predictions (each workload's fate, each flavor-resource over nominal quota): "+
		"%d right, %d wrong, %d undetermined; failing seeds: %v", ty.seeds, ty.workloads, ty.right, ty.wrong, ty.undetermined, ty.failing)
}

func TestAccAdmissionPreview_differential(t *testing.T) {
	acctest.RequireKueue(t)
	env := acctest.Current()
	k := kueueCluster{cs: env.Clientset, dyn: env.Dynamic}
	release, version := runningKueue(t)
	ctx := context.Background()
	common, err := k.ensureCommon(ctx)
	t.Cleanup(func() {
		if err := common(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var ty tally
	started := time.Now()
	for _, seed := range differentialSeeds(t, version) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			sc := generate(seed)
			t.Logf("scenario:\n%s", sc)
			if err := k.cleanup(ctx, sc); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := k.cleanup(context.Background(), sc); err != nil {
					t.Error(err)
				}
			})
			runScenario(t, k, sc, version, &ty)
			if t.Failed() {
				ty.failing = append(ty.failing, seed)
			}
		})
	}
	t.Logf("Kueue %s (modelled as %s), %s: %s", release, version, time.Since(started).Round(time.Second), &ty)
}

// runScenario creates a scenario, lets Kueue settle, predicts the change's effect from the
// live state, applies the change, lets Kueue settle again and compares.
func runScenario(t *testing.T, k kueueCluster, sc scenario, version admission.Version, ty *tally) {
	ctx := context.Background()
	if err := k.create(ctx, sc); err != nil {
		t.Fatal(err)
	}
	if err := k.submit(ctx, sc.jobs); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	before, rounds, err := k.settle(ctx, sc.queues())
	if err != nil {
		t.Fatalf("%v\nscenario:\n%s", err, sc)
	}
	t.Logf("settled before the change in %d rounds, %s", rounds, time.Since(start).Round(time.Millisecond))
	live, err := k.liveCluster(ctx, sc, before, version)
	if err != nil {
		t.Fatal(err)
	}
	planned, err := k.plannedQueues(ctx, sc)
	if err != nil {
		t.Fatal(err)
	}
	outcome := admission.Preview(live, planned)
	t.Logf("predicted:\n%s", outcome)
	if err := k.applyChange(ctx, sc, planned); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	after, rounds, err := k.settle(ctx, sc.queues())
	if err != nil {
		t.Fatalf("%v\nscenario:\n%s", err, sc)
	}
	t.Logf("settled after the change in %d rounds, %s", rounds, time.Since(start).Round(time.Millisecond))
	ty.seeds++
	diffs := compare(outcome, before, after, planned, live.ClusterQueues, live.WorkloadPriorityClasses, ty)
	if len(diffs) > 0 {
		t.Errorf("the preview's prediction differs from what Kueue did (seed %d, %s):\n  %s\n\nKueue before the change:\n%s\nKueue after the change:\n%s",
			sc.seed, sc.change.what, strings.Join(diffs, "\n  "), formatDecisions(before), formatDecisions(after))
	}
}

// liveCluster reads the scenario's Kueue objects, as the plan would list them, into the
// simulator's input; work are the Workloads as the settle read them.
func (k kueueCluster) liveCluster(ctx context.Context, sc scenario, work map[string]observedWorkload, version admission.Version) (admission.Cluster, error) {
	// The local control plane's Kueue runs with fair sharing on (localcluster's manager
	// configuration).
	c := admission.Cluster{Version: version, FairSharing: true}
	get := func(gvr schema.GroupVersionResource, namespace, name string, into any) error {
		u, err := k.dyn.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading %s %s: %w", gvr.Resource, name, err)
		}
		return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
	}
	c.NamespaceLabels = map[string]map[string]string{}
	for _, cfg := range sc.teams {
		var cq kueue.ClusterQueue
		if err := get(kueue.ClusterQueues, "", quota.ClusterQueueName(cfg.Team), &cq); err != nil {
			return c, err
		}
		c.ClusterQueues = append(c.ClusterQueues, cq)
		for _, ns := range []string{quota.NamespaceName(cfg.Team), outsideNamespace(cfg.Team)} {
			var lq kueue.LocalQueue
			if err := get(kueue.LocalQueues, ns, quota.LocalQueueName(cfg.Team), &lq); err != nil {
				return c, err
			}
			c.LocalQueues = append(c.LocalQueues, lq)
			n, err := k.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				return c, fmt.Errorf("reading namespace %s: %w", ns, err)
			}
			c.NamespaceLabels[ns] = n.Labels
		}
	}
	for _, it := range []string{bigGPU, smallGPU} {
		var rf kueue.ResourceFlavor
		if err := get(kueue.ResourceFlavors, "", it, &rf); err != nil {
			return c, err
		}
		c.ResourceFlavors = append(c.ResourceFlavors, rf)
	}
	for _, class := range sc.classes {
		var wpc kueue.WorkloadPriorityClass
		if err := get(kueue.WorkloadPriorityClasses, "", quota.PriorityClassObjectName(class.Name), &wpc); err != nil {
			return c, err
		}
		c.WorkloadPriorityClasses = append(c.WorkloadPriorityClasses, wpc)
	}
	for _, key := range slices.Sorted(maps.Keys(work)) {
		c.Workloads = append(c.Workloads, work[key].Workload)
	}
	return c, nil
}

// plannedQueues are the ClusterQueues after the change as the provider renders them, and a
// deleted team's live queue marked as being deleted.
func (k kueueCluster) plannedQueues(ctx context.Context, sc scenario) ([]kueue.ClusterQueue, error) {
	planned, err := renderQueues(sc.change.after)
	if err != nil {
		return nil, err
	}
	for i, cfg := range sc.change.after {
		if cfg != nil {
			continue
		}
		u, err := k.dyn.Resource(kueue.ClusterQueues).Get(ctx, quota.ClusterQueueName(sc.teams[i].Team), metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		var cq kueue.ClusterQueue
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cq); err != nil {
			return nil, err
		}
		cq.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		planned = append(planned, cq)
	}
	return planned, nil
}

// fate is what happened to one workload with the change, in words: "unchanged", "admitted on
// <flavors>", "preempted by <namespace/name> (<reason>)" with ", readmitted on <flavors>"
// when it is admitted again, or "evicted (<reason>)" for an eviction by a stop policy.
func predictedFates(o admission.Outcome) (fates map[string]string, undetermined map[string]string) {
	fates, undetermined = map[string]string{}, map[string]string{}
	flavors := func(ps []admission.PodSetFlavors) string {
		var out []string
		for _, p := range ps {
			for _, f := range p.Flavors {
				out = append(out, f.Flavor)
			}
		}
		slices.Sort(out)
		return strings.Join(slices.Compact(out), ",")
	}
	for _, team := range o.Teams {
		for _, a := range team.Admitted {
			fates[a.Workload.String()] = "admitted on " + flavors(a.PodSets)
		}
		for _, p := range team.Preempted {
			f := fmt.Sprintf("evicted (%s)", p.Reason)
			if p.ByClusterQueue != "" {
				f = fmt.Sprintf("preempted by %s (%s)", p.By, p.Reason)
			}
			if p.Readmitted != nil {
				f += ", readmitted on " + flavors(p.Readmitted)
			}
			fates[p.Workload.String()] = f
		}
		for _, u := range team.Undetermined {
			undetermined[u.Workload.String()] = string(u.Reason)
		}
	}
	return fates, undetermined
}

// observedFates are the fates of the workloads by what Kueue recorded before and after.
func observedFates(before, after map[string]observedWorkload) map[string]string {
	byUID := map[types.UID]string{}
	for key, o := range after {
		byUID[o.UID] = key
	}
	fates := map[string]string{}
	for key, o := range after {
		was := before[key]
		switch {
		case o.Preemptions > was.Preemptions:
			by, ok := byUID[o.PreemptedBy()]
			if !ok {
				by = fmt.Sprintf("an unknown workload (UID %s)", o.PreemptedBy())
			}
			f := fmt.Sprintf("preempted by %s (%s)", by, o.PreemptedReason)
			if o.Admitted {
				f += ", readmitted on " + strings.Join(o.Flavors, ",")
			}
			fates[key] = f
		case was.Admitted && !o.Admitted:
			fates[key] = fmt.Sprintf("evicted (%s)", o.EvictedReason)
		case o.Admitted && !was.Admitted:
			fates[key] = "admitted on " + strings.Join(o.Flavors, ",")
		}
	}
	return fates
}

// compare checks the outcome against what Kueue did, counts the predictions in ty and returns
// the differences, one a line.
func compare(o admission.Outcome, before, after map[string]observedWorkload, planned, live []kueue.ClusterQueue,
	classes []kueue.WorkloadPriorityClass, ty *tally) []string {
	predicted, undetermined := predictedFates(o)
	observed := observedFates(before, after)
	var diffs []string
	for _, key := range slices.Sorted(maps.Keys(after)) {
		ty.workloads++
		if reason, ok := undetermined[key]; ok {
			if why := undeterminedWrongly(admission.UndeterminedReason(reason), after[key], classes); why != "" {
				ty.wrong++
				diffs = append(diffs, fmt.Sprintf("%s: undetermined for %s, but %s (Kueue: %s)", key, reason, why,
					cmp.Or(observed[key], "unchanged")))
				continue
			}
			ty.undetermined++
			continue
		}
		want, got := cmp.Or(predicted[key], "unchanged"), cmp.Or(observed[key], "unchanged")
		if want == got {
			ty.right++
			continue
		}
		ty.wrong++
		diffs = append(diffs, fmt.Sprintf("%s: predicted %s, Kueue: %s", key, want, got))
	}
	for _, key := range slices.Sorted(maps.Keys(predicted)) {
		if _, ok := after[key]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: predicted %s, but there is no such workload", key, predicted[key]))
		}
	}
	return append(diffs, compareOverNominal(o, after, planned, live, ty)...)
}

// undeterminedWrongly says why a reason for "cannot determine" does not hold for a workload,
// "" when it holds: the reason must be one the simulator documents, and true of the workload
// as Kueue made it (NoFixpoint, about the simulation itself, is taken as given).
func undeterminedWrongly(reason admission.UndeterminedReason, o observedWorkload, classes []kueue.WorkloadPriorityClass) string {
	if !slices.Contains(admission.UndeterminedReasons, reason) {
		return "it is not a reason the simulator documents"
	}
	w := o.Workload
	holds := false
	for _, ps := range w.Spec.PodSets {
		switch reason {
		case admission.TopologyAwareScheduling:
			holds = holds || ps.TopologyRequest.Requested()
		case admission.PartialAdmission:
			holds = holds || (ps.MinCount != nil && *ps.MinCount < ps.Count)
		case admission.NodeAffinity:
			if a := ps.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
				holds = true
			}
		}
	}
	switch reason {
	case admission.AdmissionChecks:
		holds = len(w.Status.AdmissionChecks) > 0
	case admission.UnknownPriorityClass:
		holds = w.Spec.PriorityClassRef != nil && !slices.ContainsFunc(classes, func(c kueue.WorkloadPriorityClass) bool {
			return c.Name == w.Spec.PriorityClassRef.Name
		})
	case admission.NoFixpoint:
		holds = true
	case admission.WaitForPodsReady:
		holds = o.Evicted && o.EvictedReason == "PodsReadyTimeout"
	}
	if holds {
		return ""
	}
	if why, ok := unusedSettings[reason]; ok {
		return why
	}
	return map[admission.UndeterminedReason]string{
		admission.TopologyAwareScheduling: "no pod set's topologyRequest asks for a required, preferred or unconstrained topology",
		admission.PartialAdmission:        "no pod set has a minCount below its count",
		admission.NodeAffinity:            "no pod set has a required node affinity",
		admission.AdmissionChecks:         "the workload has no admission checks",
		admission.UnknownPriorityClass:    "its priority class is listed",
		admission.WaitForPodsReady:        "it was not evicted for pods not ready in time",
	}[reason]
}

// unusedSettings are the reasons about settings that no scenario has (the queues are the
// provider's, the local manager's configuration is fixed, the namespaces' labels are read),
// with why they do not hold.
var unusedSettings = map[admission.UndeterminedReason]string{
	admission.QueueingStrategy:     "the scenario's queues are BestEffortFIFO",
	admission.FlavorFungibility:    "the scenario's queues have the default flavorFungibility",
	admission.HierarchicalCohort:   "the scenario has no Cohort objects",
	admission.CohortQuota:          "the scenario has no Cohort objects",
	admission.NamespaceSelector:    "the namespaces' labels were read",
	admission.PreemptionStrategies: "the local manager runs the default preemption strategies",
	admission.ManagerConfiguration: "the local manager's configuration has no such setting",
	admission.KueueRelease:         "the local manager runs a modelled release",
}

// compareOverNominal checks the predicted flavor-resources over nominal quota against the
// usage of the workloads Kueue admitted.
func compareOverNominal(o admission.Outcome, after map[string]observedWorkload, planned, live []kueue.ClusterQueue, ty *tally) []string {
	nominal := map[string]int64{}
	for _, cqs := range [][]kueue.ClusterQueue{live, planned} { // planned last: it wins
		for _, cq := range cqs {
			for _, rg := range cq.Spec.ResourceGroups {
				for _, f := range rg.Flavors {
					for _, r := range f.Resources {
						nominal[cq.Name+" "+f.Name+" "+string(r.Name)] = kueueAmount(string(r.Name), r.NominalQuota)
					}
				}
			}
		}
	}
	used := map[string]int64{}
	for _, w := range after {
		if !w.Admitted {
			continue
		}
		a := w.Workload.Status.Admission
		if a == nil {
			continue
		}
		for _, ps := range a.PodSetAssignments {
			for res, q := range ps.ResourceUsage {
				used[a.ClusterQueue+" "+ps.Flavors[res]+" "+string(res)] += kueueAmount(string(res), q)
			}
		}
	}
	observed := map[string]string{}
	for key, u := range used {
		if u > nominal[key] {
			observed[key] = fmt.Sprintf("uses %d of %d", u, nominal[key])
		}
	}
	predicted := map[string]string{}
	for _, team := range o.Teams {
		for _, n := range team.OverNominal {
			predicted[team.ClusterQueue+" "+n.Flavor+" "+n.Resource] = fmt.Sprintf("uses %d of %d", n.Used, n.Nominal)
		}
	}
	var diffs []string
	for _, key := range slices.Sorted(maps.Keys(maps.Collect(func(yield func(string, bool) bool) {
		for k := range predicted {
			yield(k, true)
		}
		for k := range observed {
			yield(k, true)
		}
	}))) {
		want, got := cmp.Or(predicted[key], "within nominal quota"), cmp.Or(observed[key], "within nominal quota")
		if want == got {
			ty.right++
			continue
		}
		ty.wrong++
		diffs = append(diffs, fmt.Sprintf("%s: predicted %s, Kueue's admitted workloads: %s", key, want, got))
	}
	return diffs
}

// kueueAmount is a quantity in the units Kueue counts: millicores for cpu, else the value.
func kueueAmount(resource string, q k8sresource.Quantity) int64 {
	if resource == string(corev1.ResourceCPU) {
		return q.MilliValue()
	}
	return q.Value()
}

// formatDecisions lists decisions by namespace/name, one a line.
func formatDecisions(ws map[string]observedWorkload) string {
	var b strings.Builder
	for _, key := range slices.Sorted(maps.Keys(ws)) {
		fmt.Fprintf(&b, "  %s: %s\n", ws[key].Namespace, ws[key])
	}
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

// What Kueue did is read from the decisions before and after the change: a new preemption
// (with the preemptor named by the UID in Kueue's message, and a readmission), an admission,
// an eviction by other means, and nothing.
func TestObservedFates(t *testing.T) {
	w := func(uid string, admitted bool, flavors []string, preemptions int64, message string) observedWorkload {
		return observedWorkload{UID: types.UID(uid), Admitted: admitted, Flavors: flavors, Preemptions: preemptions,
			PreemptedReason: "InCohortReclamation", PreemptedMessage: message, EvictedReason: "ClusterQueueStopped"}
	}
	byP := "Preempted to accommodate a workload (UID: p, JobUID: j) due to reclamation within the cohort"
	before := map[string]observedWorkload{
		"ns/preempted":   w("1", true, []string{"f"}, 0, ""),
		"ns/readmitted":  w("2", true, []string{"f"}, 1, byP),
		"ns/admitted":    w("3", false, nil, 1, byP),
		"ns/evicted":     w("4", true, []string{"f"}, 0, ""),
		"ns/pending":     w("5", false, nil, 0, ""),
		"ns/running":     w("6", true, []string{"f"}, 0, ""),
		"ns/preemptor":   w("p", false, nil, 0, ""),
		"ns/by-stranger": w("7", true, []string{"f"}, 0, ""),
	}
	after := map[string]observedWorkload{
		"ns/preempted":   w("1", false, nil, 1, byP),
		"ns/readmitted":  w("2", true, []string{"g"}, 2, byP),
		"ns/admitted":    w("3", true, []string{"f"}, 1, byP),
		"ns/evicted":     w("4", false, nil, 0, ""),
		"ns/pending":     w("5", false, nil, 0, ""),
		"ns/running":     w("6", true, []string{"f"}, 0, ""),
		"ns/preemptor":   w("p", true, []string{"f"}, 0, ""),
		"ns/by-stranger": w("7", false, nil, 1, "Preempted to accommodate a workload (UID: x, JobUID: y) due to ..."),
		"ns/new":         w("8", true, []string{"f"}, 0, ""),
	}
	want := map[string]string{
		"ns/preempted":   "preempted by ns/preemptor (InCohortReclamation)",
		"ns/readmitted":  "preempted by ns/preemptor (InCohortReclamation), readmitted on g",
		"ns/admitted":    "admitted on f",
		"ns/evicted":     "evicted (ClusterQueueStopped)",
		"ns/preemptor":   "admitted on f",
		"ns/by-stranger": "preempted by an unknown workload (UID x) (InCohortReclamation)",
		"ns/new":         "admitted on f",
	}
	got := observedFates(before, after)
	for _, key := range slices.Sorted(maps.Keys(after)) {
		if got[key] != want[key] {
			t.Errorf("%s: got %q, want %q", key, got[key], want[key])
		}
	}
}

// A prediction that differs from what Kueue did is a difference, counted wrong; a right one
// is counted right; "cannot determine" counts only for a reason that holds for the workload.
func TestCompare(t *testing.T) {
	const cq = "q"
	ref := func(name string) admission.WorkloadRef { return admission.WorkloadRef{Namespace: "ns", Name: name} }
	onF := []admission.PodSetFlavors{{Name: "main", Count: 1, Flavors: []admission.ResourceFlavor{{Resource: "nvidia.com/gpu", Flavor: "f"}}}}
	pending := observedWorkload{UID: "1"}
	admitted := observedWorkload{UID: "1", Admitted: true, Flavors: []string{"f"}}
	for name, tc := range map[string]struct {
		outcome       admission.Outcome
		after         observedWorkload
		right, wrong  int
		undetermined  int
		wantDifferent bool
	}{
		"admission predicted and made": {
			outcome: admission.Outcome{Teams: []admission.TeamOutcome{{ClusterQueue: cq, Admitted: []admission.Admitted{{Workload: ref("w"), PodSets: onF}}}}},
			after:   admitted, right: 1,
		},
		"admission predicted, not made": {
			outcome: admission.Outcome{Teams: []admission.TeamOutcome{{ClusterQueue: cq, Admitted: []admission.Admitted{{Workload: ref("w"), PodSets: onF}}}}},
			after:   pending, wrong: 1, wantDifferent: true,
		},
		"admission made, not predicted": {
			after: admitted, wrong: 1, wantDifferent: true,
		},
		"undetermined for a reason the workload does not have": {
			outcome: admission.Outcome{Teams: []admission.TeamOutcome{{ClusterQueue: cq, Undetermined: []admission.Undetermined{{Workload: ref("w"), Reason: admission.PartialAdmission}}}}},
			after:   pending, wrong: 1, wantDifferent: true,
		},
		"undetermined for a reason that holds": {
			outcome: admission.Outcome{Teams: []admission.TeamOutcome{{ClusterQueue: cq, Undetermined: []admission.Undetermined{{Workload: ref("w"), Reason: admission.NoFixpoint}}}}},
			after:   admitted, undetermined: 1,
		},
	} {
		t.Run(name, func(t *testing.T) {
			var ty tally
			diffs := compare(tc.outcome, map[string]observedWorkload{"ns/w": pending}, map[string]observedWorkload{"ns/w": tc.after}, nil, nil, nil, &ty)
			if (len(diffs) > 0) != tc.wantDifferent || ty.right != tc.right || ty.wrong != tc.wrong || ty.undetermined != tc.undetermined {
				t.Errorf("differences %q, tally %s; want different %t, %d right, %d wrong, %d undetermined",
					diffs, &ty, tc.wantDifferent, tc.right, tc.wrong, tc.undetermined)
			}
		})
	}
}
