package kube

import (
	"context"
	"fmt"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// KueueSnapshot is what Kueue admits against, as listed from the cluster for the admission
// preview, and how the manager's version was found.
type KueueSnapshot struct {
	admission.Cluster
	// VersionFound is false when the manager's Deployment could not be read: Cluster.Version is
	// then the newest the preview models.
	VersionFound bool
	// ManagerTag is the manager image's tag when it names a version the preview does not model.
	ManagerTag string
}

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// ListKueue lists, once each and each request sent once, the ClusterQueues, LocalQueues,
// ResourceFlavors, WorkloadPriorityClasses and Workloads of the whole cluster, and reads the
// manager's version from its image. Fair sharing counts as enabled when a ClusterQueue reports
// a fair-sharing status, which the manager writes only then.
func ListKueue(ctx context.Context, c *Client) (KueueSnapshot, error) {
	ctx = WithoutRetries(ctx)
	var s KueueSnapshot
	// Each list runs at once; the error reported is the first in this order, whichever failed first.
	lists := []func() error{
		func() error { return List(ctx, c, kueue.ClusterQueues, &s.ClusterQueues) },
		func() error { return List(ctx, c, kueue.LocalQueues, &s.LocalQueues) },
		func() error { return List(ctx, c, kueue.ResourceFlavors, &s.ResourceFlavors) },
		func() error { return List(ctx, c, kueue.WorkloadPriorityClasses, &s.WorkloadPriorityClasses) },
		func() error { return List(ctx, c, kueue.Workloads, &s.Workloads) },
	}
	errs := make([]error, len(lists))
	var manager appsv1.Deployment
	found := false
	var wg sync.WaitGroup
	for i, list := range lists {
		wg.Go(func() { errs[i] = list() })
	}
	wg.Go(func() {
		var err error
		// Reading the Deployment may be forbidden; the preview then models the newest version.
		if found, err = c.Get(ctx, deployments, kueue.ManagerNamespace, kueue.ManagerDeployment, &manager); err != nil {
			found = false
		}
	})
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return KueueSnapshot{}, err
		}
	}
	for _, cq := range s.ClusterQueues {
		if cq.Status != nil && cq.Status.FairSharing != nil {
			s.FairSharing = true
		}
	}
	s.Version = admission.Latest
	if found {
		v, tag := managerVersion(manager)
		if v != 0 {
			s.Version, s.VersionFound = v, true
		} else {
			s.ManagerTag = tag
		}
	}
	return s, nil
}

// managerVersion is the modelled version of the manager container's image tag (0 when none is
// modelled), and the tag.
func managerVersion(d appsv1.Deployment) (admission.Version, string) {
	tag := ""
	for _, c := range d.Spec.Template.Spec.Containers {
		image, _, _ := strings.Cut(c.Image, "@") // the digest, if any, follows the tag
		i := strings.LastIndex(image, ":")
		if i < 0 || strings.Contains(image[i:], "/") {
			continue
		}
		tag = image[i+1:]
		if v, err := admission.ParseVersion(tag); err == nil {
			return v, tag
		}
	}
	return 0, tag
}

// VersionText names the modelled version and where it came from.
func (s KueueSnapshot) VersionText() string {
	if s.VersionFound {
		return fmt.Sprintf("Kueue %s, the manager's version", s.Version)
	}
	if s.ManagerTag != "" {
		return fmt.Sprintf("Kueue %s (the manager runs %s, which the preview does not model)", s.Version, s.ManagerTag)
	}
	return fmt.Sprintf("Kueue %s (the manager's version could not be read from %s/%s)", s.Version,
		kueue.ManagerNamespace, kueue.ManagerDeployment)
}
