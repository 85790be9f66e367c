package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	at "github.com/quotaworks/terraform-provider-hyperpod/internal/admission/admissiontest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// What the preview drops of the objects it reads changes no prediction: a cohort whose
// Workloads have labels, condition messages, images, sidecars, an overhead, node selectors and
// affinities, and whose queues carry Kueue's usage figures, is predicted the same from the lean
// objects, and what the lean objects drop is gone.
func TestLeanObjectsPredictTheSame(t *testing.T) {
	const gpu = "nvidia.com/gpu"
	sidecar := corev1.ContainerRestartPolicyAlways
	rich := func(w *at.WorkloadWrapper, flavor string) kueue.Workload {
		wl := w.Obj()
		wl.Labels = map[string]string{"app": "train"}
		wl.Annotations = map[string]string{"note": "x"}
		wl.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kueue"}}
		for i := range wl.Status.Conditions {
			wl.Status.Conditions[i].Message = "a long message Kueue writes"
		}
		spec := &wl.Spec.PodSets[0].Template.Spec
		spec.Containers[0].Image, spec.Containers[0].Command = "trainer:1", []string{"train"}
		spec.InitContainers = []corev1.Container{{Name: "proxy", Image: "proxy:1", RestartPolicy: &sidecar,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
		spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		spec.NodeSelector = map[string]string{"type": flavor}
		spec.Volumes = []corev1.Volume{{Name: "data"}}
		return wl
	}
	queue := func(name, nominal string) kueue.ClusterQueue {
		cq := at.MakeClusterQueue(name).Cohort("c").ResourceGroup(at.MakeFlavorQuotas("p4").
			Resource(gpu, nominal).Resource(corev1.ResourceCPU.String(), "8").Obj()).Obj()
		cq.Annotations = map[string]string{"configuration": "{}"}
		cq.Status = &kueue.ClusterQueueStatus{AdmittedWorkloads: 1, FairSharing: &kueue.FairSharingStatus{WeightedShare: 10},
			Conditions: []metav1.Condition{{Type: "Active", Message: "Can admit new workloads"}}}
		return cq
	}
	c := admission.Cluster{FairSharing: true,
		ClusterQueues:   []kueue.ClusterQueue{queue("a", "2"), queue("b", "4")},
		LocalQueues:     []kueue.LocalQueue{at.MakeLocalQueue("lq", "ns-a", "a"), at.MakeLocalQueue("lq", "ns-b", "b")},
		ResourceFlavors: []kueue.ResourceFlavor{at.MakeResourceFlavor("p4", "type", "p4")},
		Workloads: []kueue.Workload{
			rich(at.MakeWorkload("running", "ns-a").Queue("lq").Request(gpu, "4").AdmitOn("a", "p4"), "p4"),
			rich(at.MakeWorkload("waiting", "ns-b").Queue("lq").Request(gpu, "3").Created(1e9), "p4"),
			rich(at.MakeWorkload("elsewhere", "ns-b").Queue("lq").Request(gpu, "1").Created(2e9), "p5"),
		},
	}
	before := admission.Simulate(c).String()
	leaned := c
	leaned.ClusterQueues = append([]kueue.ClusterQueue(nil), c.ClusterQueues...)
	leaned.Workloads = nil
	for _, w := range c.Workloads {
		w.Spec.PodSets = append([]kueue.PodSet(nil), w.Spec.PodSets...)
		w.Status.Conditions = append([]metav1.Condition(nil), w.Status.Conditions...)
		lean(&w)
		leaned.Workloads = append(leaned.Workloads, w)
	}
	for i := range leaned.ClusterQueues {
		lean(&leaned.ClusterQueues[i])
	}
	if after := admission.Simulate(leaned).String(); after != before || before == "" {
		t.Errorf("predicted from the lean objects:\n%s\nfrom the objects as read:\n%s", after, before)
	}
	w, cq := leaned.Workloads[0], leaned.ClusterQueues[0]
	ps := w.Spec.PodSets[0].Template.Spec
	if w.Labels != nil || w.ManagedFields != nil || w.Status.Conditions[0].Message != "" || ps.Containers[0].Image != "" ||
		ps.InitContainers[0].Image != "" || ps.Volumes != nil {
		t.Errorf("a lean Workload kept what the preview does not model: %+v", w)
	}
	if cq.Annotations != nil || cq.Status.Conditions != nil || cq.Status.AdmittedWorkloads != 0 || cq.Status.FairSharing == nil {
		t.Errorf("a lean ClusterQueue: %+v, want its spec and whether it reports fair sharing", cq)
	}
}
