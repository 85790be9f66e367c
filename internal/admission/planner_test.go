package admission

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// stopsAfter is a context whose Err reports cancellation from its n-th call on: a simulation
// under it stops wherever it checks the n-th time, with no clock involved.
type stopsAfter struct {
	context.Context
	n     int64
	calls atomic.Int64
}

func (c *stopsAfter) Err() error {
	if c.calls.Add(1) >= c.n {
		return context.Canceled
	}
	return nil
}

func (c *stopsAfter) Done() <-chan struct{} {
	if c.calls.Load() >= c.n {
		done := make(chan struct{})
		close(done)
		return done
	}
	return nil
}

// changed is c with its first ClusterQueue's quotas halved, and that queue's name.
func changed(c Cluster) (Cluster, string) { return changedAt(c, 0) }

// changedAt is c with its i-th ClusterQueue's quotas halved, as a plan renders it anew, and
// that queue's name.
func changedAt(c Cluster, i int) (Cluster, string) {
	cq := c.ClusterQueues[i]
	cq.Spec.ResourceGroups = slices.Clone(cq.Spec.ResourceGroups)
	for g := range cq.Spec.ResourceGroups {
		group := &cq.Spec.ResourceGroups[g]
		group.Flavors = slices.Clone(group.Flavors)
		for f := range group.Flavors {
			group.Flavors[f].Resources = slices.Clone(group.Flavors[f].Resources)
			for r := range group.Flavors[f].Resources {
				q := &group.Flavors[f].Resources[r].NominalQuota
				*q = *resource.NewQuantity(q.Value()/2, q.Format)
			}
		}
	}
	return c.WithQueue(cq.Name, &cq), cq.Name
}

func TestSimulateContextStops(t *testing.T) {
	c := randomCluster(3)
	past, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	for _, tt := range []struct {
		name  string
		ctx   context.Context
		cause error
	}{
		{"deadline passed", past, context.DeadlineExceeded},
		{"cancelled before", &stopsAfter{Context: context.Background(), n: 1}, context.Canceled},
		// The first check passes: the simulation stops inside its cycles.
		{"cancelled while running", &stopsAfter{Context: context.Background(), n: 2}, context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, run := range []func() (Outcome, error){
				func() (Outcome, error) { return SimulateContext(tt.ctx, c) },
				func() (Outcome, error) { next, _ := changed(c); return EffectContext(tt.ctx, c, next) },
				func() (Outcome, error) { next, _ := changed(c); return NewPlanner(c).Effect(tt.ctx, next) },
			} {
				o, err := run()
				var stopped *Stopped
				if !errors.As(err, &stopped) || !errors.Is(err, tt.cause) {
					t.Fatalf("error %v (%T), want a *Stopped wrapping %v", err, err, tt.cause)
				}
				if !o.Empty() {
					t.Errorf("a stopped prediction returned an outcome:\n%s", o)
				}
			}
		})
	}
	if o, err := SimulateContext(context.Background(), c); err != nil || !reflect.DeepEqual(o, Simulate(c)) {
		t.Errorf("SimulateContext without a stop = %v, %v; want Simulate's outcome", o, err)
	}
}

// TestPlannerEffect: the Planner's effect of a change on its cohorts is Effect of the cluster
// restricted to the cohorts the changed queue is in before and after, and with no queue named,
// Effect of the whole cluster.
func TestPlannerEffect(t *testing.T) {
	for seed := range uint64(200) {
		now := randomCluster(seed)
		if seed%3 == 0 {
			// A second cohort, and queues without one, beside the first.
			other := randomCluster(seed + 1000)
			for i := range other.ClusterQueues {
				cq := &other.ClusterQueues[i]
				cq.Name = "o" + cq.Name
				if cq.Spec.CohortName != "" {
					cq.Spec.CohortName = "o"
				}
			}
			for i := range other.LocalQueues {
				other.LocalQueues[i].Namespace = "o" + other.LocalQueues[i].Namespace
				other.LocalQueues[i].Spec.ClusterQueue = "o" + other.LocalQueues[i].Spec.ClusterQueue
			}
			for i := range other.Workloads {
				w := &other.Workloads[i]
				w.Namespace = "o" + w.Namespace
				if w.Status.Admission != nil {
					w.Status.Admission.ClusterQueue = "o" + w.Status.Admission.ClusterQueue
				}
			}
			now.ClusterQueues = append(now.ClusterQueues, other.ClusterQueues...)
			now.LocalQueues = append(now.LocalQueues, other.LocalQueues...)
			now.Workloads = append(now.Workloads, other.Workloads...)
		}
		next, name := changed(now)
		var names []string
		for _, q := range append(now.CohortOf(name).ClusterQueues, next.CohortOf(name).ClusterQueues...) {
			names = append(names, q.Name)
		}
		p := NewPlanner(now)
		for _, tt := range []struct {
			queues []string
			want   Outcome
		}{
			{[]string{name}, Effect(now.CohortOf(names...), next.CohortOf(names...))},
			{nil, Effect(now, next)},
		} {
			got, err := p.Effect(context.Background(), next, tt.queues...)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("seed %d, queues %v: Planner.Effect = %v\n%s\nwant\n%s", seed, tt.queues, err, got, tt.want)
			}
		}
	}
}

// TestPlannerSharesBaseline: concurrent previews of one cohort make its baseline once, and a
// baseline stopped by its caller's context is made again by the next caller.
func TestPlannerSharesBaseline(t *testing.T) {
	now := randomCluster(7)
	now.ClusterQueues[0].Spec.CohortName = "c"
	for i := 1; i < len(now.ClusterQueues); i++ {
		now.ClusterQueues[i].Spec.CohortName = "c"
	}
	next, name := changed(now)
	want := Effect(now, next)

	p := NewPlanner(now)
	var made atomic.Int64
	p.made = func() { made.Add(1) }
	stopped, err := p.Effect(&stopsAfter{Context: context.Background(), n: 2}, next, name)
	if !errors.Is(err, context.Canceled) || !stopped.Empty() {
		t.Fatalf("a preview stopped while making the baseline = %v, %v", stopped, err)
	}
	var wg sync.WaitGroup
	results := make([]Outcome, 20)
	errs := make([]error, len(results))
	for i := range results {
		wg.Go(func() { results[i], errs[i] = p.Effect(context.Background(), next, name) })
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || !reflect.DeepEqual(results[i], want) {
			t.Fatalf("preview %d = %v\n%s\nwant\n%s", i, errs[i], results[i], want)
		}
	}
	if got := made.Load(); got != 2 {
		t.Errorf("%d baselines made for one cohort: want the stopped one and one shared by the %d previews", got, len(results))
	}
}

// A plan past its budget asks for the changes left, and each answer comes at once: no cohort is
// taken, no baseline made.
func TestPlannerPastItsDeadlineAnswersAtOnce(t *testing.T) {
	now := randomCluster(7)
	next, name := changed(now)
	p := NewPlanner(now)
	var made atomic.Int64
	p.made = func() { made.Add(1) }
	past, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	_, err := p.Effect(past, next, name)
	if _, ok := errors.AsType[*Stopped](err); !ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Effect past the deadline = %v, want a *Stopped for the deadline", err)
	}
	if made.Load() != 0 {
		t.Errorf("%d baselines made past the deadline, want none", made.Load())
	}
}

// The part of a one-cohort cluster that admission in the cohort depends on is the whole
// cluster, given as it is: a plan takes it once per change previewed.
func TestCohortOfOneCohortIsTheCluster(t *testing.T) {
	c := randomCluster(5)
	for i := range c.ClusterQueues {
		c.ClusterQueues[i].Spec.CohortName = "one"
	}
	if len(c.Workloads) == 0 {
		t.Fatal("the generated cluster has no Workloads")
	}
	got := c.CohortOf(c.ClusterQueues[0].Name)
	if &got.Workloads[0] != &c.Workloads[0] || len(got.Workloads) != len(c.Workloads) {
		t.Errorf("CohortOf of the one cohort copied its %d Workloads", len(c.Workloads))
	}
	// A second cohort's queue leaves the first's part: its Workloads are not the first's.
	c.ClusterQueues[len(c.ClusterQueues)-1].Spec.CohortName = "other"
	part := c.CohortOf(c.ClusterQueues[0].Name)
	if len(part.ClusterQueues) != len(c.ClusterQueues)-1 {
		t.Errorf("CohortOf kept %d ClusterQueues, want %d", len(part.ClusterQueues), len(c.ClusterQueues)-1)
	}
}

// withPodsQuota gives every flavor of the ClusterQueue name of c a quota of pods, so that its
// pending Workloads count their pods (addPending adds them to the pod sets the simulations
// share), while the other queues' do not.
func withPodsQuota(c Cluster, name string) Cluster {
	c.ClusterQueues = slices.Clone(c.ClusterQueues)
	for i := range c.ClusterQueues {
		if c.ClusterQueues[i].Name != name {
			continue
		}
		spec := &c.ClusterQueues[i].Spec
		spec.ResourceGroups = slices.Clone(spec.ResourceGroups)
		for g := range spec.ResourceGroups {
			group := &spec.ResourceGroups[g]
			group.CoveredResources = append(slices.Clone(group.CoveredResources), corev1.ResourcePods)
			group.Flavors = slices.Clone(group.Flavors)
			for f := range group.Flavors {
				group.Flavors[f].Resources = append(slices.Clone(group.Flavors[f].Resources),
					kueue.ResourceQuota{Name: corev1.ResourcePods, NominalQuota: resource.MustParse(strconv.Itoa(1 + i%3))})
			}
		}
	}
	return c
}

// TestPlannerSharesModelsAcrossChanges: one Planner previews a change of every ClusterQueue in
// turn (half of the seeds giving it a quota of pods), then the first again, and each
// prediction is what Effect makes from the objects alone, so no simulation changes what the
// Planner's later ones read of the cluster.
func TestPlannerSharesModelsAcrossChanges(t *testing.T) {
	for seed := range uint64(200) {
		now := randomCluster(seed)
		p := NewPlanner(now)
		order := make([]int, 0, len(now.ClusterQueues)+1)
		for i := range now.ClusterQueues {
			order = append(order, i)
		}
		for _, i := range append(order, 0) {
			next, name := changedAt(now, i)
			if seed%2 == 0 {
				next = withPodsQuota(next, name)
			}
			var names []string
			for _, q := range append(now.CohortOf(name).ClusterQueues, next.CohortOf(name).ClusterQueues...) {
				names = append(names, q.Name)
			}
			want := Effect(now.CohortOf(names...), next.CohortOf(names...))
			got, err := p.Effect(context.Background(), next, name)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, change of %s: Planner.Effect = %v\n%s\nwant\n%s", seed, name, err, got, want)
			}
		}
	}
}
