package kueuebackend

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Listing for `terraform query`: each kind with a paged LIST (kube.ListPages), the objects named
// after a team read as Get reads them.

var (
	_ backend.QuotaList     = (*teamQuotas)(nil)
	_ backend.NamespaceList = (*teamNamespaces)(nil)
)

// List lists the ClusterQueues a page at a time and hands on those named after a team that f
// selects (by the queue's cohortName and flavors), each with what its configuration cannot hold.
func (s *teamQuotas) List(ctx context.Context, f quota.ListFilter, page func([]*backend.Quota) error) error {
	return listPages(ctx, s.kube, kueue.ClusterQueues, kindClusterQueue, func(cqs []kueue.ClusterQueue) error {
		var out []*backend.Quota
		for _, cq := range cqs {
			team, ok := quota.TeamFromClusterQueueName(cq.Name)
			if !ok || !quota.ValidTeam(team) || !f.SelectsQuota(team, cq.Spec.CohortName, flavorsOf(cq)) {
				continue
			}
			q := s.quotaOf(cq)
			q.Config.Config.Team = team
			if !q.Terminating && q.ConfigErr == nil {
				q.NotRepresented = quota.NotRepresented(s.catalog, cq, q.Config)
			}
			out = append(out, q)
		}
		return pageOf(out, page)
	})
}

// flavorsOf names the flavors of every resource group of cq.
func flavorsOf(cq kueue.ClusterQueue) []string {
	var out []string
	for _, g := range cq.Spec.ResourceGroups {
		for _, f := range g.Flavors {
			out = append(out, f.Name)
		}
	}
	return out
}

// List lists the LocalQueues, then the Namespaces a page at a time, and hands on the Namespaces
// named after a team whose name starts with teamPrefix, each with its LocalQueue. A LocalQueue
// that feeds another ClusterQueue is what an apply would change (one the add-on writes is not
// the provider's to change).
func (s *teamNamespaces) List(ctx context.Context, teamPrefix string, page func([]*backend.TeamNamespace) error) error {
	queues := map[string]kueue.LocalQueue{}
	err := listPages(ctx, s.kube, kueue.LocalQueues, kindLocalQueue, func(lqs []kueue.LocalQueue) error {
		for _, lq := range lqs {
			if team, ok := quota.TeamFromNamespaceName(lq.Namespace); ok && lq.Name == quota.LocalQueueName(team) {
				queues[lq.Namespace] = lq
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return listPages(ctx, s.kube, kube.Namespaces, kindNamespace, func(nss []corev1.Namespace) error {
		var out []*backend.TeamNamespace
		for _, ns := range nss {
			team, ok := quota.TeamFromNamespaceName(ns.Name)
			if !ok || !strings.HasPrefix(team, teamPrefix) {
				continue
			}
			var lq *kueue.LocalQueue
			if q, found := queues[ns.Name]; found {
				lq = &q
			}
			t := s.namespaceOf(team, ns, lq)
			t.Team = team
			if !s.addonQueues {
				t.NotRepresented = quota.LocalQueueNotRepresented(team, lq)
			}
			out = append(out, t)
		}
		return pageOf(out, page)
	})
}

// list lists the WorkloadPriorityClasses named after a class (<class>-priority).
func (s *PriorityClasses) list(ctx context.Context) ([]*StoredClass, error) {
	var out []*StoredClass
	err := listPages(ctx, s.kube, kueue.WorkloadPriorityClasses, kindPriorityClass, func(wpcs []kueue.WorkloadPriorityClass) error {
		for _, wpc := range wpcs {
			if _, ok := quota.PriorityClassOfObjectName(wpc.Name); !ok {
				continue
			}
			c, err := storedClassOf(wpc)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pageOf hands a page on unless it is empty.
func pageOf[T any](items []T, page func([]T) error) error {
	if len(items) == 0 {
		return nil
	}
	return page(items)
}

// listPages is kube.ListPages with a failed LIST worded as one of kind; an error of onPage (the
// caller's) is returned as it is.
func listPages[T any](ctx context.Context, c *kube.Client, gvr schema.GroupVersionResource, kind string, onPage func([]T) error) error {
	var stopped error
	err := kube.ListPages(ctx, c, gvr, func(items []T) error {
		stopped = onPage(items)
		return stopped
	})
	switch {
	case stopped != nil:
		return stopped
	case err != nil:
		k := kinds[kind]
		return &backend.RequestError{Op: backend.OpRead, Kind: kind, Err: err, Problem: backend.Problem{
			Summary: "Cannot list " + k.resource(),
			Detail:  errorDetail("Listing "+k.resource(), "list", k.resource(), err),
		}}
	}
	return nil
}
