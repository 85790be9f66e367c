package localcluster

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

var (
	clusterQueues = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	localQueues   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
)

// TestCluster starts the real control plane. It skips only when the binaries have not been
// built (the Makefile always builds them first); anything else missing is a failure.
func TestCluster(t *testing.T) {
	assets, err := DefaultAssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	if !HasBinaries(assets) {
		t.Skipf("no kube-apiserver/etcd in %s: run `make controlplane` (scripts/controlplane-assets.sh) to build them", assets)
	}

	ctx := t.Context()
	work := t.TempDir()
	start := time.Now()
	c, err := Start(ctx, Options{AssetsDir: assets, WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane up at %s after %s", c.Host, time.Since(start).Round(10*time.Millisecond))
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
	})
	cs := c.Clientset
	dyn, err := dynamic.NewForConfig(c.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("kubeconfig", func(t *testing.T) {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath)
		if err != nil {
			t.Fatal(err)
		}
		kc, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		v, err := kc.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		if v.GitVersion != KubernetesVersion {
			t.Errorf("server version %q, want %q", v.GitVersion, KubernetesVersion)
		}
		if cfg.Host != c.Host || c.Host[:len("https://127.0.0.1:")] != "https://127.0.0.1:" {
			t.Errorf("kubeconfig host %q, cluster host %q", cfg.Host, c.Host)
		}
	})

	t.Run("kueue v1beta2 served", func(t *testing.T) {
		list, err := cs.Discovery().ServerResourcesForGroupVersion("kueue.x-k8s.io/v1beta2")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range list.APIResources {
			got = append(got, r.Name)
		}
		for _, want := range []string{"clusterqueues", "localqueues", "resourceflavors", "workloadpriorityclasses", "cohorts", "workloads"} {
			if !slices.Contains(got, want) {
				t.Errorf("kueue.x-k8s.io/v1beta2 lacks %s (has %v)", want, got)
			}
		}
	})

	t.Run("nodes match the fleet", func(t *testing.T) {
		want, err := ExpectedTotals(Fleet, catalog.Builtin())
		if err != nil {
			t.Fatal(err)
		}
		checkNodes := func(t *testing.T) {
			nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := SumNodes(nodes.Items)
			if len(got) != len(want) {
				t.Errorf("got %d instance types, want %d: %+v", len(got), len(want), got)
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s:\n got  %+v\n want %+v", k, got[k], w)
				}
			}
			for _, n := range nodes.Items {
				if n.Labels[LabelNodeHealth] != NodeHealthSchedulable {
					t.Errorf("%s: health label %q", n.Name, n.Labels[LabelNodeHealth])
				}
				// The admission plugin's not-ready taint is gone from Ready nodes.
				if !n.Spec.Unschedulable && len(n.Spec.Taints) > 0 {
					t.Errorf("%s: taints %v", n.Name, n.Spec.Taints)
				}
			}
		}
		checkNodes(t)
		// Idempotent: a second run changes nothing and fails on nothing.
		if err := CreateFleet(ctx, cs, Fleet, nil); err != nil {
			t.Fatalf("second CreateFleet: %v", err)
		}
		checkNodes(t)
	})

	t.Run("clusterqueue v1beta2 round trip", func(t *testing.T) {
		cq := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2",
			"kind":       "ClusterQueue",
			"metadata":   map[string]any{"name": "hyperpod-ns-smoke-clusterqueue"},
			"spec": map[string]any{
				"namespaceSelector": map[string]any{},
				"resourceGroups": []any{map[string]any{
					"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
					"flavors": []any{map[string]any{
						"name": "ml.g5.12xlarge",
						"resources": []any{
							map[string]any{"name": "cpu", "nominalQuota": "48"},
							map[string]any{"name": "memory", "nominalQuota": "192Gi"},
							map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "4"},
						},
					}},
				}},
			},
		}}
		if _, err := dyn.Resource(clusterQueues).Create(ctx, cq, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := dyn.Resource(clusterQueues).Get(ctx, cq.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		flavors, _, _ := unstructured.NestedSlice(got.Object, "spec", "resourceGroups")
		if len(flavors) != 1 {
			t.Fatalf("resourceGroups %v", flavors)
		}
		// The CRD's defaults apply although no Kueue runs.
		if s, _, _ := unstructured.NestedString(got.Object, "spec", "queueingStrategy"); s != "BestEffortFIFO" {
			t.Errorf("queueingStrategy %q, want the CRD default BestEffortFIFO", s)
		}
		if err := dyn.Resource(clusterQueues).Delete(ctx, cq.GetName(), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("pods without a controller-manager", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hyperpod-ns-smoke"}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "smoke", Labels: map[string]string{"kueue.x-k8s.io/queue-name": "hyperpod-ns-smoke-localqueue"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name:  "main",
				Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					catalog.ResourceNvidiaGPU: resource.MustParse("1"),
				}, Limits: corev1.ResourceList{
					catalog.ResourceNvidiaGPU: resource.MustParse("1"),
				}},
			}}},
		}
		if _, err := cs.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating a Pod in a fresh namespace (no default ServiceAccount): %v", err)
		}
		if _, err := cs.CoreV1().Pods(ns.Name).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		lq := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2",
			"kind":       "LocalQueue",
			"metadata":   map[string]any{"name": "hyperpod-ns-smoke-localqueue", "namespace": ns.Name},
			"spec":       map[string]any{"clusterQueue": "hyperpod-ns-smoke-clusterqueue"},
		}}
		if _, err := dyn.Resource(localQueues).Namespace(ns.Name).Create(ctx, lq, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}

		// Deleting the namespace completes (the stand-in for the namespace controller).
		if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
		if err != nil {
			t.Fatalf("namespace %s not deleted: %v", ns.Name, err)
		}
		// And the name can be reused at once.
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	if _, err := os.Stat(c.KubeconfigPath); !os.IsNotExist(err) {
		t.Errorf("kubeconfig still there after Stop: %v", err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}
