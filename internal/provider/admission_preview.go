package provider

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
}

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
	now, version, err := p.snapshot(ctx)
	if err != nil {
		diags.AddAttributeWarning(at, "No admission preview", fmt.Sprintf(
			"What this change does to the jobs of team %q was not previewed: reading the cluster's Kueue objects and "+
				"Workloads failed (%v). The plan itself is not affected. %s", team, err, previewNote))
		return false
	}
	effect := admission.Effect(now, now.WithQueue(name, next))
	verb := "changes"
	if next == nil {
		verb = "deletion"
	}
	diags.AddAttributeWarning(at, fmt.Sprintf("Admission preview: team %s", team), fmt.Sprintf(
		"What this quota %s does to jobs, as %s schedules them:\n\n%s\n%s", verb, version, effectText(effect), previewNote))
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
