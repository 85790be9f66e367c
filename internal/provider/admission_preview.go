package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// previewBudget bounds what one plan spends on its admission previews, the read of the cluster
// included, so a plan never waits longer than this on a slow or unreachable cluster or on a
// large cohort's simulation. It is counted while some change waits for its preview (see
// budgetClock), not from the first change on.
const previewBudget = 10 * time.Second

// maxPreviews bounds the previews of one plan: a plan that changes more quotas is a review of
// the whole plan, which hyperpod-plan-review makes at once.
const maxPreviews = 20

// admissionPreview predicts, during plan, what a quota change does to the jobs of its cohort.
// It reads the cluster's Kueue objects and Workloads once per provider process (one plan), the
// first time a plan changes something that can move admission, and never for a plan that
// changes nothing. Every cohort's outcome without the plan's changes is computed once and
// shared by the previews of that cohort.
type admissionPreview struct {
	// off says why no preview is made ("" when previews are on): the provider setting.
	off string
	// unavailable says why no preview can be made: the provider configuration is not known
	// until apply, say.
	unavailable string
	state       backend.KueueState
	// budget is what the plan's previews may take in all; zero is previewBudget.
	budget time.Duration

	clock    budgetClock
	once     sync.Once
	readOver atomic.Bool // set once read has set what follows
	snap     backend.KueueSnapshot
	planner  *admission.Planner
	readErr  error

	// slots hold one token per preview simulating: as many as there are processors.
	slots     chan struct{}
	slotsOnce sync.Once

	mu sync.Mutex
	// previews are this run's warnings by change.
	previews map[string]*previewEntry
	made     int
	// notices are the warnings given once per plan, by the change that carries each: the same
	// change planned again (fast path, then the framework) carries it again.
	notices map[notice]string
}

// notice is a warning that a plan gives once, whatever number of changes it concerns.
type notice int

const (
	noticeNoPreview notice = iota // no preview can be made, or no more in the budget
	noticeRefused                 // the preview was made without reads the cluster refused
	noticeTooMany                 // the plan changes more than maxPreviews quotas
)

// previewEntry is one change's preview, worked out once per run.
type previewEntry struct {
	done chan struct{}
	w    previewWarning
}

// previewWarning is one preview's warning; cannot, when set, says why no preview was made and
// stands in for the warning.
type previewWarning struct {
	summary, detail string
	cannot          string
	// refused is set when the preview was made without reads the cluster refused; blocked when
	// no preview could be made because the cluster refused reads it needs.
	refused, blocked *backend.ReadsRefused
}

// previewNote is what every preview says of its scope.
const previewNote = "Terraform plans each resource on its own, so this considers this change alone, against the " +
	"cluster as it is now. For every change of a saved plan at once, run hyperpod-plan-review on `terraform show -json` " +
	"of the plan. Turn previews off with admission_preview = false in the provider block, or " +
	"HYPERPOD_ADMISSION_PREVIEW=false."

// read reads the cluster once per run, by deadline.
func (p *admissionPreview) read(ctx context.Context, deadline time.Time) error {
	p.once.Do(func() {
		// A cancelled first RPC must not leave every later one without a preview.
		ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		readOver := makeRoomForSnapshot()
		p.snap, p.readErr = p.state.Snapshot(ctx)
		if p.readErr == nil {
			p.planner = admission.NewPlanner(p.snap.Cluster)
		}
		// Its garbage collection would make the first preview wait.
		go func(held bool) {
			if live, limit := readOver(held); limit != 0 {
				tflog.Debug(ctx, "admission preview: soft memory limit raised by the live heap with the snapshot",
					map[string]any{"live_heap_bytes": live, "memory_limit_bytes": limit})
			}
		}(p.readErr == nil)
		p.readOver.Store(true)
	})
	return p.readErr
}

// readFailed reports, without waiting, whether the read is over and failed.
func (p *admissionPreview) readFailed() bool {
	return p.readOver.Load() && p.readErr != nil
}

// warnQuotaChange adds, as a warning at at, the predicted effect of the team's quota becoming
// planned (nil: deleting it; no quota of the team yet: creating it), with the instance types of
// cat, and reports whether it previewed. The store places the quota as it will hold it.
func (p *admissionPreview) warnQuotaChange(ctx context.Context, at path.Path, cat *catalog.Catalog, team string, planned *quota.ResolvedConfig, diags *diag.Diagnostics) bool {
	if p == nil || p.off != "" {
		return false
	}
	key := team + "\x00deleted"
	if planned != nil {
		// The quota's JSON, not its %v: that prints the addresses its pointers hold, which differ
		// each time the same change is planned.
		resolved, err := json.Marshal(planned)
		if err != nil {
			return false
		}
		key = team + "\x00" + string(resolved)
	}
	return p.warn(ctx, at, key, diags, func(ctx context.Context) previewWarning {
		after, queue, err := p.state.WithQuota(p.snap.Cluster, cat, team, planned)
		if err != nil {
			return previewWarning{cannot: fmt.Sprintf("the planned quota cannot be placed (%v)", err)}
		}
		outcome, err := p.planner.Effect(ctx, after, queue)
		if err != nil {
			return previewWarning{cannot: cannotPredict(err, p.limit())}
		}
		what := "this change of the quota"
		switch {
		case planned == nil:
			what = "deleting this quota"
		case !hasQueue(p.snap.Cluster, queue):
			what = "creating this quota"
		}
		return previewWarning{summary: fmt.Sprintf("Admission preview: team %s", team), detail: fmt.Sprintf(
			"What %s does to jobs (modelled on %s):\n\n%s\n%s", what, p.snap.Version, effectText(outcome), previewNote)}
	})
}

// hasQueue reports whether c has the ClusterQueue queue.
func hasQueue(c admission.Cluster, queue string) bool {
	for _, q := range c.ClusterQueues {
		if q.Name == queue {
			return true
		}
	}
	return false
}

// warnPriorityChange adds, as a warning at at, the predicted effect of the cluster scheduler
// config's priority classes becoming next (prior before): Kueue v0.19 gives admitted and pending
// Workloads of a class its new value, v0.15 only Workloads created afterwards.
func (p *admissionPreview) warnPriorityChange(ctx context.Context, at path.Path, prior, next []quota.PriorityClass, diags *diag.Diagnostics) {
	if p == nil || p.off != "" || slices.Equal(prior, next) {
		return
	}
	p.warn(ctx, at, fmt.Sprintf("priority classes\x00%v", next), diags, func(ctx context.Context) previewWarning {
		now := p.snap.Cluster
		after := now
		after.WorkloadPriorityClasses = nil
		ours := map[string]bool{}
		for _, c := range append(append([]quota.PriorityClass{}, prior...), next...) {
			ours[quota.PriorityClassObjectName(c.Name)] = true
		}
		for _, c := range now.WorkloadPriorityClasses {
			if !ours[c.Name] {
				after.WorkloadPriorityClasses = append(after.WorkloadPriorityClasses, c)
			}
		}
		for _, c := range next {
			after.WorkloadPriorityClasses = append(after.WorkloadPriorityClasses, quota.RenderPriorityClass(c, ""))
		}
		outcome, err := p.planner.Effect(ctx, after)
		if err != nil {
			return previewWarning{cannot: cannotPredict(err, p.limit())}
		}
		return previewWarning{summary: "Admission preview: priority classes", detail: fmt.Sprintf(
			"What this change of the priority classes does to jobs (modelled on %s):\n\n%s\n%s", p.snap.Version,
			effectText(outcome), previewNote)}
	})
}

// cannotPredict words why a simulation gave no prediction: the plan's budget ran out, or the
// plan was interrupted.
func cannotPredict(err error, budget time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("cannot be predicted: the previews took longer than %s in all", budget)
	}
	return "cannot be predicted: the plan was interrupted"
}

// warn adds the warning of the change key, worked out once per run by preview, and the plan's
// once-only warnings this change carries. It reports whether the change was previewed.
func (p *admissionPreview) warn(ctx context.Context, at path.Path, key string, diags *diag.Diagnostics, preview func(context.Context) previewWarning) bool {
	w := p.previewOf(ctx, key, preview)
	if w.refused != nil && p.carries(noticeRefused, key) {
		diags.AddAttributeWarning(at, "Admission preview: a read was refused", fmt.Sprintf(
			"The cluster refused %s, which the admission preview reads once per plan; the previews of this plan were "+
				"made without it. %s", strings.Join(w.refused.Reads, ", "), w.refused.Grant))
	}
	switch w.cannot {
	case "":
		diags.AddAttributeWarning(at, w.summary, w.detail)
		return true
	case tooMany:
		if p.carries(noticeTooMany, key) {
			diags.AddAttributeWarning(at, "No admission preview past "+fmt.Sprint(maxPreviews)+" changes", fmt.Sprintf(
				"This plan changes more than %d quotas or priority classes. The first %d changes planned carry a preview "+
					"each; this one and the rest have none, and this warning is given once for all of them. For the "+
					"effect of every change of the plan together, save the plan and run hyperpod-plan-review on "+
					"`terraform show -json` of it.", maxPreviews, maxPreviews))
		}
	default:
		if w.blocked != nil && p.carries(noticeNoPreview, key) {
			diags.AddAttributeWarning(at, "Admission preview: a read was refused", fmt.Sprintf(
				"The cluster refused %s, which the admission preview needs, so no change of this plan is previewed; "+
					"this warning is given once for all of them. The plan itself is not affected. %s",
				strings.Join(w.blocked.Reads, ", "), w.blocked.Grant))
		} else if p.carries(noticeNoPreview, key) {
			diags.AddAttributeWarning(at, "No admission preview", fmt.Sprintf(
				"What this plan's changes do to jobs was not previewed: %s. This warning is given once, on the first "+
					"change planned, for this change and every other change of the plan that would be previewed. The "+
					"plan itself is not affected. %s", w.cannot, previewNote))
		}
	}
	return false
}

// tooMany is the reason of a change planned after maxPreviews others.
const tooMany = "too many changes"

// previewOf is the warning of the change key, worked out once per run: the framework may plan a
// resource again after the provider's own plan of it (see fastServer), with the same change.
// Previews of different changes run at once, each bounded by the plan's budget.
func (p *admissionPreview) previewOf(ctx context.Context, key string, preview func(context.Context) previewWarning) previewWarning {
	p.mu.Lock()
	if e, ok := p.previews[key]; ok {
		p.mu.Unlock()
		<-e.done
		return e.w
	}
	if p.previews == nil {
		p.previews = map[string]*previewEntry{}
	}
	e := &previewEntry{done: make(chan struct{})}
	p.previews[key] = e
	full := p.made >= maxPreviews
	if !full {
		p.made++
	}
	p.mu.Unlock()
	defer close(e.done)
	switch {
	case p.unavailable != "":
		e.w.cannot = p.unavailable
	case full && !p.readFailed():
		// Past the plan's last preview a change needs nothing of the cluster: it does not wait
		// for the read, which a plan of many new quotas would otherwise do for each of them.
		// A read that failed already is the plan's one reason instead.
		e.w.cannot = tooMany
	default:
		e.w = p.predict(ctx, preview)
	}
	return e.w
}

// predict is the warning preview makes once the cluster is read, within what is left of the
// plan's budget.
func (p *admissionPreview) predict(ctx context.Context, preview func(context.Context) previewWarning) (w previewWarning) {
	deadline := p.clock.start(p.limit())
	defer p.clock.stop()
	switch {
	case p.read(ctx, deadline) != nil:
		w.cannot = fmt.Sprintf("reading the cluster's Kueue objects and Workloads failed (%v)", p.readErr)
		if problem, ok := errors.AsType[backend.Problem](p.readErr); ok {
			w.cannot = strings.TrimSuffix(problem.Detail, ".") // the store's own words: what is missing
		}
		w.blocked, _ = errors.AsType[*backend.ReadsRefused](p.readErr)
	default:
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		w = p.simulate(ctx, preview)
		if w.cannot == "" {
			w.refused = p.snap.Refused
		}
	}
	return w
}

// limit is the plan's budget.
func (p *admissionPreview) limit() time.Duration {
	if p.budget == 0 {
		return previewBudget
	}
	return p.budget
}

// budgetClock counts the plan's preview budget down while at least one change waits for its
// preview, the read included. Terraform plans the changes of a large plan over many seconds,
// planning other resources between them: that time is not spent on previews, and a budget
// counted from the first change on would leave the changes planned last without a preview
// however fast the previews are.
type budgetClock struct {
	now func() time.Time // nil: time.Now

	mu      sync.Mutex
	spent   time.Duration // until since
	waiting int
	since   time.Time // when waiting last went from 0 to 1
}

// start counts one more change waiting and returns when budget runs out if some change waits
// from now on, as this one does until then at most.
func (c *budgetClock) start(budget time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.time()
	if c.waiting == 0 {
		c.since = now
	}
	c.waiting++
	return now.Add(budget - c.spent - now.Sub(c.since))
}

// stop counts one change less waiting.
func (c *budgetClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting--; c.waiting == 0 {
		c.spent += c.time().Sub(c.since)
	}
}

// time is the clock's now.
func (c *budgetClock) time() time.Time {
	if c.now == nil {
		return time.Now()
	}
	return c.now()
}

// simulate runs preview once a processor is free for it. The plan's previews share one budget:
// run all at once, on a busy machine none ends within it; run as many at a time as there are
// processors, in about the order asked, the first are made and only the last are cut off.
func (p *admissionPreview) simulate(ctx context.Context, preview func(context.Context) previewWarning) previewWarning {
	p.slotsOnce.Do(func() { p.slots = make(chan struct{}, runtime.GOMAXPROCS(0)) })
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
		return preview(ctx)
	case <-ctx.Done():
		return previewWarning{cannot: cannotPredict(ctx.Err(), p.limit())}
	}
}

// carries reports whether the change key carries the plan's warning n: the first change to ask
// does, and so does the same change planned again.
func (p *admissionPreview) carries(n notice, key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.notices == nil {
		p.notices = map[notice]string{}
	}
	owner, given := p.notices[n]
	if !given {
		p.notices[n] = key
		return true
	}
	return owner == key
}

// effectText lists an outcome for a person, or says that nothing moves.
func effectText(o admission.Outcome) string {
	if o.Empty() {
		return "No pending job starts, and no running job is preempted or left over its team's nominal quota.\n"
	}
	return strings.TrimRight(o.String(), "\n") + "\n\n\"over nominal quota\" means running and preemptible: Kueue " +
		"reclaims it only when another team of the cohort, or a higher priority in the team, needs the quota.\n"
}
