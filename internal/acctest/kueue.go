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

// builder holds the object a wrapper builds and gives every wrapper Obj and Unstructured.
type builder[T any] struct{ obj T }

func build[T any](obj T) builder[T] { return builder[T]{obj: obj} }

// Obj returns the object built.
func (b *builder[T]) Obj() *T { return &b.obj }

// Unstructured returns the object built as the dynamic client sends it.
func (b *builder[T]) Unstructured() *unstructured.Unstructured { return toUnstructured(&b.obj) }

// ClusterQueueWrapper builds a ClusterQueue with one resource group covering cpu, memory and
// both accelerator resources, and a namespace selector matching every namespace.
type ClusterQueueWrapper struct{ builder[kueue.ClusterQueue] }

// Nominal is the nominal quota of one flavor; accelerators count in the instance type's
// accelerator resource, the other accelerator resource gets 0.
type Nominal struct {
	CPU, Memory, Accelerators string
}

// MakeClusterQueue starts a ClusterQueue without flavors.
func MakeClusterQueue(name string) *ClusterQueueWrapper {
	const gpu, neuron = "nvidia.com/gpu", "aws.amazon.com/neurondevice"
	return &ClusterQueueWrapper{build(kueue.ClusterQueue{
		TypeMeta:   kueue.TypeMeta(kueue.KindClusterQueue),
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups:    []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu", "memory", gpu, neuron}}},
		},
	})}
}

// Flavor adds the flavor of an instance type of the built-in catalog.
func (w *ClusterQueueWrapper) Flavor(instanceType string, n Nominal) *ClusterQueueWrapper {
	it, ok := catalog.Builtin().Lookup(instanceType)
	if !ok {
		panic("acctest: not in the catalog: " + instanceType)
	}
	g := &w.obj.Spec.ResourceGroups[0]
	var resources []kueue.ResourceQuota
	for _, res := range g.CoveredResources {
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
	g.Flavors = append(g.Flavors, kueue.FlavorQuotas{Name: instanceType, Resources: resources})
	return w
}

// Create creates the queue and deletes it when the test ends.
func (w *ClusterQueueWrapper) Create(t testing.TB) {
	t.Helper()
	create(t, kueue.ClusterQueues, w.Unstructured())
}

// LocalQueueWrapper builds a LocalQueue.
type LocalQueueWrapper struct{ builder[kueue.LocalQueue] }

// MakeLocalQueue starts a LocalQueue in namespace.
func MakeLocalQueue(name, namespace string) *LocalQueueWrapper {
	return &LocalQueueWrapper{build(kueue.LocalQueue{
		TypeMeta:   kueue.TypeMeta(kueue.KindLocalQueue),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	})}
}

// ClusterQueue points the queue at a ClusterQueue.
func (w *LocalQueueWrapper) ClusterQueue(name string) *LocalQueueWrapper {
	w.obj.Spec.ClusterQueue = name
	return w
}

// Labels sets the queue's labels.
func (w *LocalQueueWrapper) Labels(labels map[string]string) *LocalQueueWrapper {
	w.obj.Labels = labels
	return w
}

// ResourceFlavorWrapper builds a ResourceFlavor.
type ResourceFlavorWrapper struct{ builder[kueue.ResourceFlavor] }

// MakeResourceFlavor starts a ResourceFlavor selecting the nodes of the instance type it is
// named after, as HyperPod names its flavors.
func MakeResourceFlavor(instanceType string) *ResourceFlavorWrapper {
	return &ResourceFlavorWrapper{build(kueue.ResourceFlavor{
		TypeMeta:   kueue.TypeMeta(kueue.KindResourceFlavor),
		ObjectMeta: metav1.ObjectMeta{Name: instanceType},
		Spec:       kueue.ResourceFlavorSpec{NodeLabels: map[string]string{quota.LabelInstanceType: instanceType}},
	})}
}

// WorkloadPriorityClassWrapper builds a WorkloadPriorityClass.
type WorkloadPriorityClassWrapper struct {
	builder[kueue.WorkloadPriorityClass]
}

// MakeWorkloadPriorityClass starts a WorkloadPriorityClass with object name name and value 0.
func MakeWorkloadPriorityClass(name string) *WorkloadPriorityClassWrapper {
	return &WorkloadPriorityClassWrapper{build(kueue.WorkloadPriorityClass{
		TypeMeta:   kueue.TypeMeta(kueue.KindWorkloadPriorityClass),
		ObjectMeta: metav1.ObjectMeta{Name: name},
	})}
}

// Value sets the priority value.
func (w *WorkloadPriorityClassWrapper) Value(v int32) *WorkloadPriorityClassWrapper {
	w.obj.Value = v
	return w
}
