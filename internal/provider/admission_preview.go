package provider

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
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
	// made counts this run's previews, which maxPreviews bounds.
	made atomic.Int32
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
	if p.made.Add(1) > maxPreviews {
		diags.AddAttributeWarning(at, "No admission preview", fmt.Sprintf(
			"What this change does to the jobs of team %q was not previewed: this plan changes more than %d quotas, "+
				"and each preview simulates its cohort. %s", team, maxPreviews, previewNote))
		return false
	}
	now, version, err := p.snapshot(ctx)
	if err != nil {
		diags.AddAttributeWarning(at, "No admission preview", fmt.Sprintf(
			"What this change does to the jobs of team %q was not previewed: reading the cluster's Kueue objects and "+
				"Workloads failed (%v). The plan itself is not affected. %s", team, err, previewNote))
		return false
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
	diags.AddAttributeWarning(at, fmt.Sprintf("Admission preview: team %s", team), fmt.Sprintf(
		"What %s does to jobs (modelled on %s):\n\n%s\n%s", what, version, effectText(effect), previewNote))
	return true
}

// effectText lists an outcome for a person, or says that nothing moves.
func effectText(o admission.Outcome) string {
	if o.Empty() {
		return "No pending job starts, and no running job is preempted or left over its team's nominal quota.\n"
	}
	return strings.TrimRight(o.String(), "\n") + "\n\n\"over nominal quota\" means running and preemptible: Kueue " +
		"reclaims it only when another team of the cohort, or a higher priority in the team, needs the quota.\n"
}
