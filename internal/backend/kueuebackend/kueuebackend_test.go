package kueuebackend

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// A record carries the owner rules of quota as they apply to the object it was read from.
func TestRecordOf(t *testing.T) {
	now := metav1.Now()
	for _, c := range []struct {
		name        string
		meta        metav1.ObjectMeta
		owns        map[string]bool
		unconfirmed string
		terminating bool
	}{
		{"owned", metav1.ObjectMeta{Name: "q", UID: "u1",
			Labels:      map[string]string{quota.LabelManagedBy: quota.ManagedByValue},
			Annotations: map[string]string{quota.AnnotationOwner: "a"}},
			map[string]bool{"a": true, "b": false}, "", false},
		{"marked by an interrupted run", metav1.ObjectMeta{Name: "q",
			Labels:      map[string]string{quota.LabelManagedBy: quota.ManagedByValue},
			Annotations: map[string]string{quota.AnnotationOwner: "a", quota.AnnotationUnconfirmed: "gone"}},
			map[string]bool{"a": true}, "gone", false},
		{"another tool's, marked", metav1.ObjectMeta{Name: "q",
			Annotations: map[string]string{quota.AnnotationUnconfirmed: "gone"}},
			map[string]bool{"a": false, "": false}, "", false},
		{"being deleted", metav1.ObjectMeta{Name: "q", DeletionTimestamp: &now, Finalizers: []string{"f"},
			Labels: map[string]string{quota.LabelManagedBy: quota.ManagedByValue}},
			map[string]bool{"a": true}, "", true},
	} {
		r := RecordOf("ClusterQueue", c.meta)
		for owner, want := range c.owns {
			if got := r.Owner.Owns(owner); got != want || got != quota.Owns(c.meta, owner) {
				t.Errorf("%s: Owns(%q) = %v, want %v", c.name, owner, got, want)
			}
		}
		if r.Unconfirmed != c.unconfirmed || r.Terminating != c.terminating || r.Version != string(c.meta.UID) ||
			r.Owner.Description != quota.DescribeOwner(c.meta) || len(r.HeldBy) != len(c.meta.Finalizers) {
			t.Errorf("%s: RecordOf = %+v", c.name, r)
		}
	}
}

// A team's namespace is read as its Namespace's record and metadata, with its LocalQueue's
// record and target when there is one.
func TestTeamNamespaceOf(t *testing.T) {
	now := metav1.Now()
	ns := corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: quota.NamespaceName("ml"), UID: "u1",
		Labels: map[string]string{"tier": "gold"}, Annotations: map[string]string{"note": "x"}}}
	lq := quota.RenderLocalQueue("ml", "a")
	lq.UID = "u2"
	gone := lq
	gone.DeletionTimestamp = &now
	for _, c := range []struct {
		name        string
		lq          *kueue.LocalQueue
		wantQueue   bool
		terminating bool
	}{
		{"without a LocalQueue", nil, false, false},
		{"with its LocalQueue", &lq, true, false},
		{"with its LocalQueue being deleted", &gone, true, true},
	} {
		got := teamNamespaceOf(ns, c.lq)
		if got.Name != ns.Name || got.Version != "u1" || got.Kind != kindNamespace ||
			got.Labels["tier"] != "gold" || got.Annotations["note"] != "x" {
			t.Errorf("%s: namespace record %+v", c.name, got.Record)
		}
		if (got.Queue != nil) != c.wantQueue {
			t.Fatalf("%s: Queue = %+v, want present %v", c.name, got.Queue, c.wantQueue)
		}
		if q := got.Queue; q != nil && (q.Name != lq.Name || q.Version != "u2" || q.Kind != kindLocalQueue ||
			q.ClusterQueue != quota.ClusterQueueName("ml") || q.Terminating != c.terminating || !q.Owner.Owns("a")) {
			t.Errorf("%s: queue record %+v", c.name, q)
		}
	}
}

// A LocalQueue is deleted before the apply only when the apply could not change it into the one
// wanted: it is going away, or it feeds another ClusterQueue (spec.clusterQueue is immutable).
func TestMustRecreate(t *testing.T) {
	want := quota.ClusterQueueName("ml")
	for _, c := range []struct {
		name string
		q    *backend.TeamQueue
		want bool
	}{
		{"missing", nil, false},
		{"feeding the team's queue", &backend.TeamQueue{ClusterQueue: want}, false},
		{"feeding another queue", &backend.TeamQueue{ClusterQueue: "other"}, true},
		{"being deleted", &backend.TeamQueue{Record: backend.Record{Terminating: true}, ClusterQueue: want}, true},
	} {
		if got := mustRecreate(c.q, want); got != c.want {
			t.Errorf("%s: mustRecreate = %v, want %v", c.name, got, c.want)
		}
	}
}

// A record the SageMaker backend read (it carries an id and no Kubernetes object) is refused with
// an error naming it, not cast into a panic.
func TestRecordOfAnotherStore(t *testing.T) {
	b := newBackend(nil, nil, addonGuard{off: true})
	foreign := backend.Record{Kind: "SageMaker compute quota", Name: "ml-quota", ID: "q-1a2b3c4d5e6f", Version: "1"}
	refused := func(what string, err error) {
		t.Helper()
		var p backend.Problem
		if !errors.As(err, &p) || p.Summary != "Record of another store" || !strings.Contains(p.Detail, `"ml-quota"`) {
			t.Errorf("%s of another store's record = %v, want it refused", what, err)
		}
	}
	_, err := b.QuotaDetails.Drift(t.Context(), &backend.Quota{Record: foreign}, quota.ResolvedConfig{}, "owner", true)
	refused("Drift of a quota", err)
	ns := &backend.TeamNamespace{Record: foreign}
	_, err = b.NamespaceDetails.Drift(ns, "ml", "owner")
	refused("Drift of a namespace", err)
	_, _, err = b.NamespaceDetails.Imported(ns)
	refused("Imported", err)
	// A namespace of this store whose queue is another store's.
	ns = &backend.TeamNamespace{Record: foreign, Native: corev1.Namespace{}, Queue: &backend.TeamQueue{Record: foreign}}
	_, err = b.NamespaceDetails.Drift(ns, "ml", "owner")
	refused("Drift of a queue", err)
}
