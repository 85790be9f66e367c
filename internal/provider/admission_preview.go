package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// previewTimeout bounds the one read of the cluster's Kueue state that a plan makes for its
// admission previews, so a plan never waits longer than this on an unreachable cluster.
const previewTimeout = 10 * time.Second

// admissionPreview predicts, during plan, what a quota change does to the jobs of its cohort.
// It reads the cluster's Kueue objects and Workloads once per provider process (one plan), the
// first time a plan changes something that can move admission, and never for a plan that
// changes nothing.
type admissionPreview struct {
	// off says why no preview is made ("" when previews are on): the provider setting.
	off string
	// unavailable says why no preview can be made, which a change that would be previewed
	// warns of: the provider configuration is not known until apply, say.
	unavailable string
	state       backend.KueueState

	once    sync.Once
	cluster admission.Cluster
	version string
	readErr error
	mu      sync.Mutex
	// previews are this run's warnings by change; made counts its previews, which maxPreviews
	// bounds.
	previews map[string]previewWarning
	made     int
}

// maxPreviews bounds the previews of one plan: each simulates its cohort, which on a cluster of
// a thousand teams in one cohort takes seconds. A plan that changes more quotas is a review of
// the whole plan, which hyperpod-plan-review makes at once.
const maxPreviews = 20

func (p *admissionPreview) snapshot(ctx context.Context) (admission.Cluster, string, error) {
	p.once.Do(func() {
		// A cancelled first RPC must not leave every later one without a preview.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), previewTimeout)
		defer cancel()
		p.cluster, p.version, p.readErr = p.state.Snapshot(ctx)
	})
	return p.cluster, p.version, p.readErr
}

// previewNote is what every preview says of its scope.
const previewNote = "Terraform plans each resource on its own, so this considers this change alone, against the " +
	"cluster as it is now. For every change of a saved plan at once, run hyperpod-plan-review on `terraform show -json` " +
	"of the plan. Turn previews off with admission_preview = false in the provider block."

// warnQuotaChange adds, as a warning at at, the predicted effect of putting next in place of
// the team's ClusterQueue name (next nil: deleting it), and reports whether it previewed.
func (p *admissionPreview) warnQuotaChange(ctx context.Context, at path.Path, team, name string, next *kueue.ClusterQueue, diags *diag.Diagnostics) bool {
	if p == nil || p.off != "" {
		return false
	}
	if p.unavailable != "" {
		diags.AddAttributeWarning(at, "No admission preview", fmt.Sprintf(
			"What this change does to the jobs of team %q was not previewed: %s. %s", team, p.unavailable, previewNote))
		return false
	}
	key := name + "\x00deleted"
	if next != nil {
		key = fmt.Sprintf("%s\x00%+v", name, next.Spec)
	}
	w := p.previewOf(key, func() previewWarning { return p.preview(ctx, team, name, next) })
	diags.AddAttributeWarning(at, w.summary, w.detail)
	return w.made
}

// previewWarning is one preview's warning, and whether it is a preview.
type previewWarning struct {
	summary, detail string
	made            bool
}

// previewOf is the warning of the change key, worked out once per run: the framework may plan a
// resource again after the provider's own plan of it (see fastServer), with the same change.
func (p *admissionPreview) previewOf(key string, preview func() previewWarning) previewWarning {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, ok := p.previews[key]; ok {
		return w
	}
	if p.previews == nil {
		p.previews = map[string]previewWarning{}
	}
	w := preview()
	p.previews[key] = w
	return w
}

// warnPriorityChange adds, as a warning at at, the predicted effect of the cluster scheduler
// config's priority classes becoming next (prior before): Kueue v0.19 gives admitted and pending
// Workloads of a class its new value, v0.15 only Workloads created afterwards.
func (p *admissionPreview) warnPriorityChange(ctx context.Context, at path.Path, prior, next []quota.PriorityClass, diags *diag.Diagnostics) {
	if p == nil || p.off != "" || slices.Equal(prior, next) {
		return
	}
	if p.unavailable != "" {
		diags.AddAttributeWarning(at, "No admission preview", fmt.Sprintf(
			"What this change of the priority classes does to jobs was not previewed: %s. %s", p.unavailable, previewNote))
		return
	}
	w := p.previewOf(fmt.Sprintf("priority classes\x00%v", next), func() previewWarning {
		now, version, err := p.snapshot(ctx)
		if err != nil {
			return previewWarning{summary: "No admission preview", detail: fmt.Sprintf(
				"What this change of the priority classes does to jobs was not previewed: reading the cluster's Kueue "+
					"objects and Workloads failed (%v). The plan itself is not affected. %s", err, previewNote)}
		}
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
		return previewWarning{summary: "Admission preview: priority classes", made: true, detail: fmt.Sprintf(
			"What this change of the priority classes does to jobs (modelled on %s):\n\n%s\n%s", version,
			effectText(admission.Effect(now, after)), previewNote)}
	})
	diags.AddAttributeWarning(at, w.summary, w.detail)
}

func (p *admissionPreview) preview(ctx context.Context, team, name string, next *kueue.ClusterQueue) previewWarning {
	if p.made >= maxPreviews {
		return previewWarning{summary: "No admission preview", detail: fmt.Sprintf(
			"What this change does to the jobs of team %q was not previewed: this plan changes more than %d quotas, "+
				"and each preview simulates its cohort. %s", team, maxPreviews, previewNote)}
	}
	p.made++
	now, version, err := p.snapshot(ctx)
	if err != nil {
		return previewWarning{summary: "No admission preview", detail: fmt.Sprintf(
			"What this change does to the jobs of team %q was not previewed: reading the cluster's Kueue objects and "+
				"Workloads failed (%v). The plan itself is not affected. %s", team, err, previewNote)}
	}
	after := now.WithQueue(name, next)
	// Kueue admits within a cohort: the queue's cohorts before and after the change are all
	// the simulation needs.
	var names []string
	for _, q := range append(now.CohortOf(name).ClusterQueues, after.CohortOf(name).ClusterQueues...) {
		names = append(names, q.Name)
	}
	effect := admission.Effect(now.CohortOf(names...), after.CohortOf(names...))
	what := "this change of the quota"
	if next == nil {
		what = "deleting this quota"
	}
	return previewWarning{summary: fmt.Sprintf("Admission preview: team %s", team), made: true, detail: fmt.Sprintf(
		"What %s does to jobs (modelled on %s):\n\n%s\n%s", what, version, effectText(effect), previewNote)}
}

// effectText lists an outcome for a person, or says that nothing moves.
func effectText(o admission.Outcome) string {
	if o.Empty() {
		return "No pending job starts, and no running job is preempted or left over its team's nominal quota.\n"
	}
	return strings.TrimRight(o.String(), "\n") + "\n\n\"over nominal quota\" means running and preemptible: Kueue " +
		"reclaims it only when another team of the cohort, or a higher priority in the team, needs the quota.\n"
}
