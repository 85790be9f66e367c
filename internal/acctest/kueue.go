package acctest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Builders of the Kueue objects tests create out of band, as another tool or HyperPod's
// task-governance add-on would, in the style of Kueue's own test wrappers:
//
//	acctest.MakeClusterQueue("q").Flavor("ml.g5.12xlarge", acctest.Nominal{...}).Create(t)
//
// Obj returns the typed object (internal/kueue), Unstructured the object as the dynamic client
// sends it.

// toUnstructured converts a typed object, without the null creationTimestamp the converter
// writes for an empty ObjectMeta.
func toUnstructured(obj any) *unstructured.Unstructured {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		panic("acctest: " + err.Error()) // the kueue types always convert
	}
	u := &unstructured.Unstructured{Object: content}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u
}

// create creates u with the tests' own client and deletes it when the test ends.
func create(t testing.TB, gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	t.Helper()
	PreCheck(t)
	ri := env.Dynamic.Resource(gvr).Namespace(u.GetNamespace())
	name := u.GetName()
	if _, err := ri.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s: %v", u.GetKind(), name, err)
	}
	t.Cleanup(func() {
		err := ri.Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s %s: %v", u.GetKind(), name, err)
		}
	})
}

// ClusterQueueWrapper builds a ClusterQueue with one resource group covering cpu, memory and
// both accelerator resources, and a namespace selector matching every namespace.
type ClusterQueueWrapper struct{ kueue.ClusterQueue }

// Nominal is the nominal quota of one flavor; accelerators count in the instance type's
// accelerator resource, the other accelerator resource gets 0.
type Nominal struct {
	CPU, Memory, Accelerators string
}

// MakeClusterQueue starts a ClusterQueue without flavors.
func MakeClusterQueue(name string) *ClusterQueueWrapper {
	const gpu, neuron = "nvidia.com/gpu", "aws.amazon.com/neurondevice"
	return &ClusterQueueWrapper{kueue.ClusterQueue{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kueue.KindClusterQueue},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups:    []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu", "memory", gpu, neuron}}},
		},
	}}
}

// Flavor adds the flavor of an instance type of the built-in catalog.
func (w *ClusterQueueWrapper) Flavor(instanceType string, n Nominal) *ClusterQueueWrapper {
	it, ok := catalog.Builtin().Lookup(instanceType)
	if !ok {
		panic("acctest: not in the catalog: " + instanceType)
	}
	var resources []kueue.ResourceQuota
	for _, res := range w.Spec.ResourceGroups[0].CoveredResources {
		q := "0"
		switch {
		case res == "cpu":
			q = n.CPU
		case res == "memory":
			q = n.Memory
		case string(res) == it.AcceleratorResource:
			q = n.Accelerators
		}
		resources = append(resources, kueue.ResourceQuota{Name: res, NominalQuota: k8sresource.MustParse(q)})
	}
	g := &w.Spec.ResourceGroups[0]
	g.Flavors = append(g.Flavors, kueue.FlavorQuotas{Name: instanceType, Resources: resources})
	return w
}

// Obj returns the ClusterQueue.
func (w *ClusterQueueWrapper) Obj() *kueue.ClusterQueue { return &w.ClusterQueue }

// Unstructured returns the ClusterQueue as the dynamic client sends it.
func (w *ClusterQueueWrapper) Unstructured() *unstructured.Unstructured {
	return toUnstructured(&w.ClusterQueue)
}

// Create creates the queue and deletes it when the test ends.
func (w *ClusterQueueWrapper) Create(t testing.TB) {
	t.Helper()
	create(t, kueue.ClusterQueues, w.Unstructured())
}

// LocalQueueWrapper builds a LocalQueue.
type LocalQueueWrapper struct{ kueue.LocalQueue }

// MakeLocalQueue starts a LocalQueue in namespace.
func MakeLocalQueue(name, namespace string) *LocalQueueWrapper {
	return &LocalQueueWrapper{kueue.LocalQueue{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kueue.KindLocalQueue},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}}
}

// ClusterQueue points the queue at a ClusterQueue.
func (w *LocalQueueWrapper) ClusterQueue(name string) *LocalQueueWrapper {
	w.Spec.ClusterQueue = name
	return w
}

// Labels sets the queue's labels.
func (w *LocalQueueWrapper) Labels(labels map[string]string) *LocalQueueWrapper {
	w.ObjectMeta.Labels = labels
	return w
}

// Obj returns the LocalQueue.
func (w *LocalQueueWrapper) Obj() *kueue.LocalQueue { return &w.LocalQueue }

// Unstructured returns the LocalQueue as the dynamic client sends it.
func (w *LocalQueueWrapper) Unstructured() *unstructured.Unstructured {
	return toUnstructured(&w.LocalQueue)
}

// ResourceFlavorWrapper builds a ResourceFlavor.
type ResourceFlavorWrapper struct{ kueue.ResourceFlavor }

// MakeResourceFlavor starts a ResourceFlavor selecting the nodes of the instance type it is
// named after, as HyperPod names its flavors.
func MakeResourceFlavor(instanceType string) *ResourceFlavorWrapper {
	return &ResourceFlavorWrapper{kueue.ResourceFlavor{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kueue.KindResourceFlavor},
		ObjectMeta: metav1.ObjectMeta{Name: instanceType},
		Spec:       kueue.ResourceFlavorSpec{NodeLabels: map[string]string{quota.LabelInstanceType: instanceType}},
	}}
}

// Obj returns the ResourceFlavor.
func (w *ResourceFlavorWrapper) Obj() *kueue.ResourceFlavor { return &w.ResourceFlavor }

// Unstructured returns the ResourceFlavor as the dynamic client sends it.
func (w *ResourceFlavorWrapper) Unstructured() *unstructured.Unstructured {
	return toUnstructured(&w.ResourceFlavor)
}

// WorkloadPriorityClassWrapper builds a WorkloadPriorityClass.
type WorkloadPriorityClassWrapper struct{ kueue.WorkloadPriorityClass }

// MakeWorkloadPriorityClass starts a WorkloadPriorityClass with object name name and value 0.
func MakeWorkloadPriorityClass(name string) *WorkloadPriorityClassWrapper {
	return &WorkloadPriorityClassWrapper{kueue.WorkloadPriorityClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kueue.KindWorkloadPriorityClass},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}}
}

// Value sets the priority value.
func (w *WorkloadPriorityClassWrapper) Value(v int32) *WorkloadPriorityClassWrapper {
	w.WorkloadPriorityClass.Value = v
	return w
}

// Obj returns the WorkloadPriorityClass.
func (w *WorkloadPriorityClassWrapper) Obj() *kueue.WorkloadPriorityClass {
	return &w.WorkloadPriorityClass
}

// Unstructured returns the WorkloadPriorityClass as the dynamic client sends it.
func (w *WorkloadPriorityClassWrapper) Unstructured() *unstructured.Unstructured {
	return toUnstructured(&w.WorkloadPriorityClass)
}
