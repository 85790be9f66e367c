package quota

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOwns(t *testing.T) {
	meta := func(managedBy, owner string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Labels: map[string]string{}, Annotations: map[string]string{}}
		if managedBy != "" {
			m.Labels[LabelManagedBy] = managedBy
		}
		if owner != "" {
			m.Annotations[AnnotationOwner] = owner
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		meta  metav1.ObjectMeta
		owner string
		want  bool
	}{
		{"recorded owner is this one", meta(ManagedByValue, "a"), "a", true},
		{"recorded owner is another", meta(ManagedByValue, "b"), "a", false},
		{"legacy state meets a recorded owner", meta(ManagedByValue, "b"), "", false},
		{"legacy object, any state", meta(ManagedByValue, ""), "a", true},
		{"legacy object, legacy state", meta(ManagedByValue, ""), "", true},
		{"label edited, identity matches", meta("someone", "a"), "a", true},
		{"foreign object", meta("sagemaker", ""), "a", false},
		{"unlabelled object", meta("", ""), "", false},
	} {
		if got := Owns(tc.meta, tc.owner); got != tc.want {
			t.Errorf("%s: Owns = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDescribeOwner(t *testing.T) {
	for _, tc := range []struct {
		meta metav1.ObjectMeta
		want string
	}{
		{metav1.ObjectMeta{}, "another tool (it has no app.kubernetes.io/managed-by label)"},
		{metav1.ObjectMeta{Labels: map[string]string{LabelManagedBy: "sagemaker"}}, `"sagemaker" (label app.kubernetes.io/managed-by)`},
		{metav1.ObjectMeta{Labels: map[string]string{LabelManagedBy: ManagedByValue}}, "earlier version"},
		{metav1.ObjectMeta{Labels: map[string]string{LabelManagedBy: ManagedByValue},
			Annotations: map[string]string{AnnotationOwner: "id-1", AnnotationName: "q1"}}, `owner_id "id-1" for compute quota "q1"`},
	} {
		if got := DescribeOwner(tc.meta); !strings.Contains(got, tc.want) {
			t.Errorf("DescribeOwner(%v) = %q, want it to contain %q", tc.meta, got, tc.want)
		}
	}
}
