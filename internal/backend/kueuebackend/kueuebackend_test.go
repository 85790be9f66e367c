package kueuebackend

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
