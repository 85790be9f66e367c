package kueuebackend

import (
	"context"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
)

// AddonKind is the kind HyperPod's task-governance add-on creates (its KueueManagerConfig):
// a cluster that serves it runs the add-on, which owns Kueue's objects there.
const AddonKind = "KueueManagerConfig"

// ErrAddon is the refusal of a write on a cluster with the task-governance add-on.
var ErrAddon = backend.Problem{
	Summary: "Cluster runs the task-governance add-on",
	Detail: "This cluster runs SageMaker HyperPod's task-governance add-on (it serves the add-on's " + AddonKind + "), " +
		"which owns Kueue's objects there and overwrites changes made to them by other tools, so this provider does not " +
		"write them. Manage the quotas through the SageMaker API instead, with a task_governance block in the provider:\n\n" +
		"  provider \"hyperpod\" {\n" +
		"    task_governance {\n" +
		"      cluster_arn = \"arn:aws:sagemaker:<region>:<account>:cluster/<id>\"\n" +
		"    }\n" +
		"  }\n\n" +
		"The same resources then write through the API. Data sources keep reading the cluster either way.",
}

// addonGuard refuses writes on a cluster that runs the add-on, unless off (writes the add-on
// itself makes, or a team's Namespace beside the add-on's LocalQueue).
type addonGuard struct {
	kube *kube.Client
	off  bool
}

// refuse returns ErrAddon when the cluster runs the add-on: one discovery request per provider
// run, made before its first write. A failed discovery does not block the write: it is logged,
// and the write's own request reports whatever is wrong with the connection.
func (g addonGuard) refuse(ctx context.Context) error {
	if g.off {
		return nil
	}
	addon, err := g.kube.ServesKind(ctx, AddonKind)
	if err != nil {
		tflog.Warn(ctx, "could not check the cluster for the task-governance add-on", map[string]any{"error": err.Error()})
		return nil
	}
	if addon {
		return ErrAddon
	}
	return nil
}
