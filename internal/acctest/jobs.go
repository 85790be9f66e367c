package acctest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// PyTorchJobs are the Kubeflow Training Operator's PyTorchJobs (kubeflow.org/v1), the kind the
// HyperPod CLI's `hyperpod start-job` submits. The local control plane serves the kind without a
// training operator: Kueue admits and unsuspends them, and no pod is ever made.
var PyTorchJobs = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}

// PyTorchJobKind is the kind of PyTorchJobs, as Workloads name their owner.
const PyTorchJobKind = "PyTorchJob"

// PyTorchJobWrapper builds a suspended PyTorchJob, in the style of the Kueue object builders:
//
//	acctest.MakePyTorchJob("train", ns).Queue(lq).Replicas("Worker", 2, "ml.g5.12xlarge", requests).Create(t)
type PyTorchJobWrapper struct{ obj *unstructured.Unstructured }

// MakePyTorchJob starts a suspended PyTorchJob without replicas.
func MakePyTorchJob(name, namespace string) *PyTorchJobWrapper {
	return &PyTorchJobWrapper{obj: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": PyTorchJobs.GroupVersion().String(),
		"kind":       PyTorchJobKind,
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"runPolicy":           map[string]any{"suspend": true},
			"pytorchReplicaSpecs": map[string]any{},
		},
	}}}
}

// Queue labels the job with the LocalQueue it is submitted to.
func (w *PyTorchJobWrapper) Queue(localQueue string) *PyTorchJobWrapper {
	return w.label(localcluster.LabelQueueName, localQueue)
}

// PriorityClass labels the job with the object name of a WorkloadPriorityClass.
func (w *PyTorchJobWrapper) PriorityClass(name string) *PyTorchJobWrapper {
	return w.label(kueue.PriorityClassLabel, name)
}

func (w *PyTorchJobWrapper) label(key, value string) *PyTorchJobWrapper {
	labels := w.obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[key] = value
	w.obj.SetLabels(labels)
	return w
}

// Replicas adds a replica type ("Master" or "Worker"): n pods on the instance type's nodes, each
// requesting requests, with the same limits (Kubernetes requires them for extended resources
// such as nvidia.com/gpu).
func (w *PyTorchJobWrapper) Replicas(replicaType string, n int64, instanceType string, requests corev1.ResourceList) *PyTorchJobWrapper {
	amounts := map[string]any{}
	for name, q := range requests {
		amounts[string(name)] = q.String()
	}
	spec := map[string]any{
		"replicas":      n,
		"restartPolicy": "OnFailure",
		"template": map[string]any{"spec": map[string]any{
			"nodeSelector": map[string]any{quota.LabelInstanceType: instanceType},
			"containers": []any{map[string]any{
				// The training operator expects its container to be named "pytorch".
				"name": "pytorch", "image": "busybox",
				"resources": map[string]any{"requests": amounts, "limits": amounts},
			}},
		}},
	}
	if err := unstructured.SetNestedField(w.obj.Object, spec, "spec", "pytorchReplicaSpecs", replicaType); err != nil {
		panic("acctest: " + err.Error()) // the maps above are always settable
	}
	return w
}

// Unstructured returns the job as the dynamic client sends it.
func (w *PyTorchJobWrapper) Unstructured() *unstructured.Unstructured { return w.obj.DeepCopy() }

// Create creates the job and, when the test ends, deletes it and its Workloads.
func (w *PyTorchJobWrapper) Create(t testing.TB) {
	t.Helper()
	PreCheck(t)
	if _, err := env.Dynamic.Resource(PyTorchJobs).Namespace(w.obj.GetNamespace()).Create(context.Background(), w.Unstructured(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating PyTorchJob %s/%s: %v", w.obj.GetNamespace(), w.obj.GetName(), err)
	}
	t.Cleanup(func() {
		if err := w.Delete(context.Background()); err != nil {
			t.Error(err)
		}
	})
}

// Delete deletes the job, then its Workloads (the local control plane has no garbage collector),
// and waits until they are gone, so that Kueue has released their quota. A job already gone is
// no error.
func (w *PyTorchJobWrapper) Delete(ctx context.Context) error {
	ns, name := w.obj.GetNamespace(), w.obj.GetName()
	err := env.Dynamic.Resource(PyTorchJobs).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting PyTorchJob %s/%s: %w", ns, name, err)
	}
	return Eventually(ctx, time.Minute, fmt.Sprintf("the Workloads of PyTorchJob %s/%s gone after its deletion", ns, name),
		func(ctx context.Context) (bool, string, error) {
			workloads, err := WorkloadsOwnedBy(ctx, ns, PyTorchJobKind, name)
			if err != nil || len(workloads) == 0 {
				return err == nil, "", err
			}
			for _, wl := range workloads {
				if wl.GetDeletionTimestamp() != nil {
					continue
				}
				err := env.Dynamic.Resource(kueue.Workloads).Namespace(ns).Delete(ctx, wl.GetName(), metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					return false, "", fmt.Errorf("deleting Workload %s/%s of PyTorchJob %s: %w", ns, wl.GetName(), name, err)
				}
			}
			return false, fmt.Sprintf("%d still there", len(workloads)), nil
		})
}

// WorkloadsOwnedBy lists the Workloads in namespace that Kueue made for the job of the given kind
// and name.
func WorkloadsOwnedBy(ctx context.Context, namespace, kind, name string) ([]unstructured.Unstructured, error) {
	list, err := env.Dynamic.Resource(kueue.Workloads).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Workloads in %s: %w", namespace, err)
	}
	var out []unstructured.Unstructured
	for _, wl := range list.Items {
		for _, o := range wl.GetOwnerReferences() {
			if o.Kind == kind && o.Name == name {
				out = append(out, wl)
				break
			}
		}
	}
	return out, nil
}
