package admission

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// Planner predicts what changes do to one state of the cluster, as a plan reads it once: the
// prediction without a change (the baseline) is made once per cohort and shared by every
// change of that cohort, and the objects as read are converted once for every simulation (see
// models). It is safe for concurrent use; concurrent previews of one cohort wait for one
// baseline.
type Planner struct {
	now Cluster

	// models are now's objects as simulations read them, made once by the first simulation.
	modelsOnce sync.Once
	models     *models

	mu        sync.Mutex
	baselines map[string]*baseline
	// made, when set (by tests), is called for every baseline made.
	made func()
}

// baseline is one component's prediction from the state as read, made once.
type baseline struct {
	done chan struct{}
	out  Outcome
	err  error
}

// NewPlanner returns a Planner of the cluster as read. now is not copied: it must not change.
func NewPlanner(now Cluster) *Planner {
	return &Planner{now: now, baselines: map[string]*baseline{}}
}

// Effect is what changing the cluster from the state as read to next does (see Effect) in the
// cohorts of the named ClusterQueues, before and after the change (a ClusterQueue without a
// cohort is one of its own; a name may be in next only); with no names, in the whole cluster.
// What next shares with the cluster as read (copies of its objects share what their slices and
// pointers hold) must be as read: a changed object is made anew, as the backends render one.
// Kueue admits and preempts within a cohort, so the other cohorts are left out of both
// predictions. It returns a *Stopped error when ctx is done first; a baseline stopped so is
// made again by the next caller that needs it.
func (p *Planner) Effect(ctx context.Context, next Cluster, queues ...string) (Outcome, error) {
	start := time.Now()
	// A plan past its budget asks for every change left: answer at once, before any work.
	if err := ctx.Err(); err != nil {
		return Outcome{}, &Stopped{Cause: err}
	}
	now := p.now
	if len(queues) > 0 {
		names := append(p.now.memberNames(queues), next.memberNames(queues)...)
		now, next = p.now.CohortOf(names...), next.CohortOf(names...)
	}
	base := Outcome{Version: now.Version.orLatest()}
	for _, key := range componentKeys(now) {
		out, err := p.baseline(ctx, start, key)
		if err != nil {
			return Outcome{}, err
		}
		base.Teams = append(base.Teams, out.Teams...)
	}
	slices.SortFunc(base.Teams, func(a, b TeamOutcome) int { return cmp.Compare(a.ClusterQueue, b.ClusterQueue) })
	after, err := simulateContext(ctx, next, p.sharedModels())
	if err != nil {
		return Outcome{}, err
	}
	return difference(base, after), nil
}

// sharedModels are the models of the cluster as read, made by the first caller.
func (p *Planner) sharedModels() *models {
	p.modelsOnce.Do(func() { p.models = newModels(p.now) })
	return p.models
}

// componentKey names a cohort, or a ClusterQueue without one, by one of its ClusterQueues
// (whose CohortOf it is).
type componentKey struct {
	id    string
	queue string
}

// componentKeys are the components of c's ClusterQueues, each once.
func componentKeys(c Cluster) []componentKey {
	seen := map[string]bool{}
	var out []componentKey
	for _, cq := range c.ClusterQueues {
		id := "queue\x00" + cq.Name
		if cq.Spec.CohortName != "" {
			id = "cohort\x00" + cq.Spec.CohortName
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, componentKey{id: id, queue: cq.Name})
		}
	}
	return out
}

// baseline is the prediction of one component from the state as read: made by the first
// caller, waited for by the others. A caller whose context stops it leaves nothing behind, and
// a waiter whose maker was stopped makes it itself.
func (p *Planner) baseline(ctx context.Context, start time.Time, key componentKey) (Outcome, error) {
	for {
		p.mu.Lock()
		b := p.baselines[key.id]
		if b == nil {
			b = &baseline{done: make(chan struct{})}
			p.baselines[key.id] = b
			p.mu.Unlock()
			if p.made != nil {
				p.made()
			}
			b.out, b.err = simulateContext(ctx, p.now.CohortOf(key.queue), p.sharedModels())
			if b.err != nil {
				p.mu.Lock()
				delete(p.baselines, key.id)
				p.mu.Unlock()
			}
			close(b.done)
			return b.out, b.err
		}
		p.mu.Unlock()
		select {
		case <-b.done:
			if b.err == nil {
				return b.out, nil
			}
		case <-ctx.Done():
			return Outcome{}, &Stopped{Cause: ctx.Err(), After: time.Since(start)}
		}
	}
}
