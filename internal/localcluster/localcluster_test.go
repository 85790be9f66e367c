package localcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
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

// shared is the control plane of the tests that neither stop it nor change what the others
// check (the fleet): started by the first test that needs it, stopped by TestMain.
var shared struct {
	once    sync.Once
	cluster *Cluster
	skip    string
	err     error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cluster != nil {
		if err := shared.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the shared control plane:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// sharedCluster returns the shared control plane (the package's Fleet, no Kueue manager),
// starting it on first use.
func sharedCluster(t *testing.T) *Cluster {
	t.Helper()
	shared.once.Do(func() {
		var assets string
		if assets, shared.skip, shared.err = realAssets(); shared.skip != "" || shared.err != nil {
			return
		}
		start := time.Now()
		shared.cluster, shared.err = Start(context.Background(), Options{AssetsDir: assets})
		if shared.err == nil {
			fmt.Fprintf(os.Stderr, "shared control plane up at %s after %s\n", shared.cluster.Host, time.Since(start).Round(10*time.Millisecond))
		}
	})
	if shared.skip != "" {
		t.Skip(shared.skip)
	}
	if shared.err != nil {
		t.Fatalf("the shared control plane: %v", shared.err)
	}
	return shared.cluster
}

// ownAssets returns the assets directory for a test that starts a control plane of its own.
func ownAssets(t *testing.T) string {
	t.Helper()
	assets, skip, err := realAssets()
	if err != nil {
		t.Fatal(err)
	}
	if skip != "" {
		t.Skip(skip)
	}
	return assets
}

// realAssets returns the assets directory of the tests on the real control plane. They skip
// only when its binaries have not been built (the Makefile always builds them first):
// anything else missing is a failure.
func realAssets() (assets, skip string, _ error) {
	assets, err := DefaultAssetsDir()
	if err != nil {
		return "", "", err
	}
	if !HasBinaries(assets) {
		return "", fmt.Sprintf("no kube-apiserver/etcd in %s: run `make controlplane` (scripts/controlplane-assets.sh) to build them", assets), nil
	}
	return assets, "", nil
}

// TestCluster checks the shared control plane: its kubeconfig, the Kueue CRDs, the fleet,
// and what works without a controller-manager.
func TestCluster(t *testing.T) {
	c := sharedCluster(t)
	ctx := t.Context()
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
}

// TestStop stops a control plane of its own: promptly although a namespace still waits to be
// emptied, removing the kubeconfig, the users' kubeconfigs and the state, and only once.
func TestStop(t *testing.T) {
	c, err := Start(t.Context(), Options{AssetsDir: ownAssets(t), WorkDir: t.TempDir(), Fleet: []NodeSpec{}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop()
		}
	})
	user, err := c.AddUser("someone", []string{"some-group"})
	if err != nil {
		t.Fatal(err)
	}
	const held = "nsdel-stop"
	createNamespace(t, c.Clientset, held, nil)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"hyperpod.test/hold"}}}
	if _, err := c.Clientset.CoreV1().ConfigMaps(held).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Clientset.CoreV1().Namespaces().Delete(t.Context(), held, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Stopped while the finalizer retries the namespace, which can never be emptied: Stop
	// must not wait for it.
	waitFor(t, "the finalizer to retry the namespace", func() bool { return c.finalizer.heldSyncs(held) >= 2 })

	stopErr := make(chan error, 1)
	go func() { stopErr <- c.Stop() }()
	select {
	case err = <-stopErr:
	case <-time.After(2 * time.Minute):
		t.Fatal("Stop did not return: it waits for the namespace that cannot be emptied")
	}
	stopped = true
	if err != nil {
		t.Fatal(err)
	}
	for what, path := range map[string]string{"kubeconfig": c.KubeconfigPath, "user's kubeconfig": user, "state": filepath.Join(c.WorkDir, StateDir)} {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("the %s outlived Stop: %v", what, err)
		}
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := c.AddUser("late", nil); err == nil {
		t.Error("AddUser after Stop succeeded")
	}
}
