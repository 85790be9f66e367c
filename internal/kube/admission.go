package kube

import (
	"context"
	"fmt"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// Refused are the reads the cluster refused that the preview can do without: it is made
	// without what they would have told.
	Refused []RefusedRead
}

// RefusedRead is a request the API server refused (403 Forbidden): the RBAC verb and resource
// the credentials lack.
type RefusedRead struct {
	Verb string
	GVR  schema.GroupVersionResource
	// Namespace and Name narrow a GET to one object.
	Namespace, Name string
}

// String is the permission as an RBAC rule names it: "list workloads.kueue.x-k8s.io",
// "get deployments.apps kueue-system/kueue-controller-manager".
func (r RefusedRead) String() string {
	s := r.Verb + " " + r.GVR.Resource
	if r.GVR.Group != "" {
		s += "." + r.GVR.Group
	}
	if r.Name != "" {
		s += " " + r.Namespace + "/" + r.Name
	}
	return s
}

// ReadsRefusedError is a snapshot that cannot be made because the cluster refused reads it needs.
type ReadsRefusedError struct {
	Reads []RefusedRead
}

func (e *ReadsRefusedError) Error() string {
	reads := make([]string, len(e.Reads))
	for i, r := range e.Reads {
		reads[i] = r.String()
	}
	return "the cluster refused " + strings.Join(reads, ", ")
}

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// ListKueue lists, once each and each request sent once, the ClusterQueues, LocalQueues,
// ResourceFlavors, WorkloadPriorityClasses and Workloads of the whole cluster, and reads the
// manager's version from its image. Fair sharing counts as enabled when a ClusterQueue reports
// a fair-sharing status, which the manager writes only then.
func ListKueue(ctx context.Context, c *Client) (KueueSnapshot, error) {
	ctx = WithoutRetries(ctx)
	var s KueueSnapshot
	// Each list runs at once; a refused list is reported with every other refused one, else the
	// error reported is the first in this order, whichever failed first.
	lists := []struct {
		gvr  schema.GroupVersionResource
		list func() error
	}{
		{kueue.ClusterQueues, func() error { return List(ctx, c, kueue.ClusterQueues, &s.ClusterQueues) }},
		{kueue.LocalQueues, func() error { return List(ctx, c, kueue.LocalQueues, &s.LocalQueues) }},
		{kueue.ResourceFlavors, func() error { return List(ctx, c, kueue.ResourceFlavors, &s.ResourceFlavors) }},
		{kueue.WorkloadPriorityClasses, func() error {
			return List(ctx, c, kueue.WorkloadPriorityClasses, &s.WorkloadPriorityClasses)
		}},
		{kueue.Workloads, func() error { return List(ctx, c, kueue.Workloads, &s.Workloads) }},
	}
	errs := make([]error, len(lists))
	var manager appsv1.Deployment
	found := false
	var managerRefused bool
	var wg sync.WaitGroup
	for i, l := range lists {
		wg.Go(func() { errs[i] = l.list() })
	}
	wg.Go(func() {
		var err error
		// Without the Deployment the preview models the newest version, and says so.
		if found, err = c.Get(ctx, deployments, kueue.ManagerNamespace, kueue.ManagerDeployment, &manager); err != nil {
			found, managerRefused = false, apierrors.IsForbidden(err)
		}
	})
	wg.Wait()
	var refused []RefusedRead
	for i, err := range errs {
		if apierrors.IsForbidden(err) {
			refused = append(refused, RefusedRead{Verb: "list", GVR: lists[i].gvr})
		}
	}
	if len(refused) > 0 {
		return KueueSnapshot{}, &ReadsRefusedError{Reads: refused}
	}
	for _, err := range errs {
		if err != nil {
			return KueueSnapshot{}, err
		}
	}
	if managerRefused {
		s.Refused = append(s.Refused, RefusedRead{Verb: "get", GVR: deployments,
			Namespace: kueue.ManagerNamespace, Name: kueue.ManagerDeployment})
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
