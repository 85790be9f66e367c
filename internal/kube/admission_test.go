package kube

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
)

// The manager's version comes from its image tag; a tag the preview does not model is named.
func TestManagerVersion(t *testing.T) {
	for image, want := range map[string]admission.Version{
		"registry.k8s.io/kueue/kueue:v0.19.2":           admission.V0_19,
		"registry.k8s.io/kueue/kueue:v0.15.0@sha256:ab": admission.V0_15,
		"localhost:5000/kueue:v0.17.0":                  0,
		"registry.k8s.io/kueue/kueue":                   0,
	} {
		d := appsv1.Deployment{}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "manager", Image: image}}
		if got, _ := managerVersion(d); got != want {
			t.Errorf("%s: version %v, want %v", image, got, want)
		}
	}
	s := KueueSnapshot{ManagerTag: "v0.17.0"}
	s.Version = admission.Latest
	if got := s.VersionText(); got != "Kueue v0.19 (the manager runs v0.17.0, which the preview does not model)" {
		t.Errorf("VersionText() = %q", got)
	}
}
