package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func container(cpu string, limitOnly bool) corev1.Container {
	l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	if limitOnly {
		return corev1.Container{Resources: corev1.ResourceRequirements{Limits: l}}
	}
	return corev1.Container{Resources: corev1.ResourceRequirements{Requests: l}}
}

// The pod's effective request, as Kubernetes' resource helpers compute it for the scheduler.
func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	sidecar := container("500m", false)
	sidecar.RestartPolicy = &always
	tests := []struct {
		name string
		spec corev1.PodSpec
		want int64 // millicores
	}{
		{"containers add up", corev1.PodSpec{Containers: []corev1.Container{container("1", false), container("2", false)}}, 3000},
		{"a limit stands for a missing request", corev1.PodSpec{Containers: []corev1.Container{container("2", true)}}, 2000},
		{"a larger init container wins", corev1.PodSpec{InitContainers: []corev1.Container{container("4", false)}, Containers: []corev1.Container{container("1", false)}}, 4000},
		{"a smaller init container does not count", corev1.PodSpec{InitContainers: []corev1.Container{container("1", false)}, Containers: []corev1.Container{container("3", false)}}, 3000},
		{"a sidecar adds to the containers and to later init containers",
			corev1.PodSpec{InitContainers: []corev1.Container{sidecar, container("3", false)}, Containers: []corev1.Container{container("2", false)}}, 3500},
		{"overhead is added", corev1.PodSpec{Containers: []corev1.Container{container("1", false)}, Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}, 1250},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := podRequests(&tt.spec)[corev1.ResourceCPU]
			if got.MilliValue() != tt.want {
				t.Errorf("cpu = %dm, want %dm", got.MilliValue(), tt.want)
			}
		})
	}
}
