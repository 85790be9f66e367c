package kueuebackend

import (
	"context"
	"fmt"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// kueueSnapshot is what Kueue admits against, as the preview models it from a cluster's
// objects, and how the manager's version was found.
type kueueSnapshot struct {
	admission.Cluster
	// versionFound is false when the manager's Deployment could not be read: Cluster.Version is
	// then the newest the preview models.
	versionFound bool
	// managerTag is the manager image's tag when it names a version the preview does not model.
	managerTag string
	// configProblem says why the manager's configuration, found, could not be parsed.
	configProblem string
}

// snapshotOf models the cluster that objects describe: the manager's release and its
// configuration applied. Fair sharing counts as enabled when the configuration says so or,
// without it, when a ClusterQueue reports a fair-sharing status, which the manager writes only
// then. What a read that failed would have told is assumed as the package admission documents.
func snapshotOf(o kube.KueueObjects) kueueSnapshot {
	s := kueueSnapshot{Cluster: admission.Cluster{
		ClusterQueues: o.ClusterQueues, LocalQueues: o.LocalQueues, ResourceFlavors: o.ResourceFlavors,
		WorkloadPriorityClasses: o.WorkloadPriorityClasses, Cohorts: o.Cohorts, NamespaceLabels: o.NamespaceLabels,
		Workloads: o.Workloads,
	}}
	for _, cq := range s.ClusterQueues {
		if cq.Status != nil && cq.Status.FairSharing != nil {
			s.FairSharing = true
		}
	}
	s.Version = admission.Latest
	var gates map[string]bool
	if o.ManagerFound {
		release, tag, args := managerRelease(o.ManagerContainers)
		if release.Version != 0 {
			s.Cluster, s.versionFound = s.WithRelease(release), true
		} else {
			s.managerTag = tag
		}
		gates = featureGates(args)
	}
	// The gates change decisions whether or not the configuration could be read.
	s.Manager = s.Manager.WithFeatureGates(gates)
	if o.ConfigFound {
		if m, err := admission.ParseManagerConfig([]byte(o.ManagerConfig)); err == nil {
			s.Cluster = s.WithManager(m.WithFeatureGates(gates))
		} else {
			s.configProblem = err.Error()
		}
	}
	return s
}

// featureGates are the gates of the manager's --feature-gates flag (nil when it has none, or
// one it cannot parse: the preview then assumes the release's defaults).
func featureGates(args []string) map[string]bool {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--feature-gates="); ok {
			if gates, err := admission.ParseFeatureGates(v); err == nil {
				return gates
			}
		}
	}
	return nil
}

// managerRelease is the release of the manager container's image tag (zero when none is
// modelled), the tag, and the container's arguments.
func managerRelease(containers []kube.ManagerContainer) (admission.Release, string, []string) {
	tag := ""
	var args []string
	for _, c := range containers {
		if args == nil {
			args = c.Args // the manager is the first container
		}
		image, _, _ := strings.Cut(c.Image, "@") // the digest, if any, follows the tag
		i := strings.LastIndex(image, ":")
		if i < 0 || strings.Contains(image[i:], "/") {
			continue
		}
		tag, args = image[i+1:], c.Args
		if r, err := admission.ParseRelease(tag); err == nil {
			return r, tag, args
		}
	}
	return admission.Release{}, tag, args
}

// versionText names the modelled version and where it came from, and what the preview assumes
// of the manager's configuration when it could not read it.
func (s kueueSnapshot) versionText() string {
	var text string
	switch {
	case s.versionFound:
		text = fmt.Sprintf("Kueue %s, the manager's version", s.release())
	case s.managerTag != "":
		text = fmt.Sprintf("Kueue %s (the manager runs %s, which the preview does not model)", s.Version, s.managerTag)
	default:
		text = fmt.Sprintf("Kueue %s (the manager's version could not be read from %s/%s)", s.Version,
			kueue.ManagerNamespace, kueue.ManagerDeployment)
	}
	if s.Manager.Known {
		return text
	}
	why := "could not be read"
	if s.configProblem != "" {
		why = "could not be parsed (" + s.configProblem + ")"
	}
	fairSharing := "off"
	if s.FairSharing {
		fairSharing = "on"
	}
	return fmt.Sprintf("%s; its configuration %s from %s/%s, so Kueue's defaults are assumed, with fair sharing %s "+
		"as the ClusterQueues' status shows", text, why, kueue.ManagerNamespace, kueue.ManagerConfigMap, fairSharing)
}

// release is the manager's release as modelled: "v0.17 (modelled as v0.19)".
func (s kueueSnapshot) release() string {
	if s.ManagerMinor != 0 {
		return admission.Release{Minor: s.ManagerMinor, Version: s.Version}.String()
	}
	return s.Version.String()
}

// ReadSnapshot reads the cluster's Kueue objects and Workloads with client and models them, as
// the preview does, for a review made outside the provider: a refused read that the model needs
// fails it with a *backend.ReadsRefused whose Grant is grant.
func ReadSnapshot(ctx context.Context, client *kube.Client, grant string) (backend.KueueSnapshot, error) {
	return kueueState{kube: client, grant: grant}.Snapshot(ctx)
}
