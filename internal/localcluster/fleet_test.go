package localcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

func TestNodeName(t *testing.T) {
	for in, want := range map[string]string{
		"ml.g5.12xlarge":        "hyperpod-i-g5-12xlarge-3",
		"ml.p6-b200.48xlarge":   "hyperpod-i-p6-b200-48xlarge-3",
		"ml.p6e-gb200.36xlarge": "hyperpod-i-p6e-gb200-36xlarge-3",
	} {
		if got := NodeName(in, 3); got != want {
			t.Errorf("NodeName(%q, 3) = %q, want %q", in, got, want)
		}
	}
}

func TestNodesDefaultFleet(t *testing.T) {
	nodes, err := Nodes(Fleet, catalog.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 12 {
		t.Fatalf("got %d nodes, want 12", len(nodes))
	}
	byName := map[string]*corev1.Node{}
	for _, n := range nodes {
		if byName[n.Name] != nil {
			t.Fatalf("duplicate node name %s", n.Name)
		}
		byName[n.Name] = n
		for k, v := range map[string]string{
			LabelNodeHealth: NodeHealthSchedulable,
			LabelOS:         "linux",
			LabelArch:       "amd64",
			LabelZone:       Zone,
			LabelHostname:   n.Name,
		} {
			if n.Labels[k] != v {
				t.Errorf("%s: label %s = %q, want %q", n.Name, k, n.Labels[k], v)
			}
		}
		if !equality.Semantic.DeepEqual(n.Status.Capacity, n.Status.Allocatable) {
			t.Errorf("%s: allocatable %v differs from capacity %v", n.Name, n.Status.Allocatable, n.Status.Capacity)
		}
		if len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Type != corev1.NodeReady {
			t.Errorf("%s: conditions %v, want one Ready condition", n.Name, n.Status.Conditions)
		}
	}

	// The figures of the reference table, written out once here.
	g5 := byName["hyperpod-i-g5-12xlarge-1"]
	if g5 == nil {
		t.Fatalf("no hyperpod-i-g5-12xlarge-1 in %v", names(nodes))
	}
	wantRes(t, g5, corev1.ResourceCPU, "48")
	wantRes(t, g5, corev1.ResourceMemory, "192Gi")
	wantRes(t, g5, corev1.ResourcePods, "110")
	wantRes(t, g5, catalog.ResourceNvidiaGPU, "4")
	wantRes(t, g5, ResourceEFA, "1")
	if g5.Labels[LabelInstanceType] != "ml.g5.12xlarge" {
		t.Errorf("instance-type label %q", g5.Labels[LabelInstanceType])
	}

	p5 := byName["hyperpod-i-p5-48xlarge-2"]
	wantRes(t, p5, catalog.ResourceNvidiaGPU, "8")
	wantRes(t, p5, ResourceEFA, "32")
	wantRes(t, p5, corev1.ResourceMemory, "2Ti")

	trn := byName["hyperpod-i-trn1-32xlarge-1"]
	wantRes(t, trn, catalog.ResourceNeuronDevice, "16")
	wantRes(t, trn, corev1.ResourceCPU, "128")
	if _, ok := trn.Status.Capacity[catalog.ResourceNvidiaGPU]; ok {
		t.Errorf("trn1 node has nvidia.com/gpu")
	}

	c5 := byName["hyperpod-i-c5-4xlarge-1"]
	wantRes(t, c5, corev1.ResourceCPU, "16")
	wantRes(t, c5, corev1.ResourceMemory, "32Gi")
	for _, r := range []corev1.ResourceName{catalog.ResourceNvidiaGPU, catalog.ResourceNeuronDevice, ResourceEFA} {
		if _, ok := c5.Status.Capacity[r]; ok {
			t.Errorf("c5 node has %s", r)
		}
	}

	// One c5 is cordoned: the last one.
	cordoned := 0
	for _, n := range nodes {
		if n.Spec.Unschedulable {
			cordoned++
			if n.Name != "hyperpod-i-c5-4xlarge-4" {
				t.Errorf("cordoned node %s, want hyperpod-i-c5-4xlarge-4", n.Name)
			}
			if len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != TaintUnschedulable {
				t.Errorf("cordoned node taints %v", n.Spec.Taints)
			}
		} else if len(n.Spec.Taints) != 0 {
			t.Errorf("%s: taints %v on a Ready schedulable node", n.Name, n.Spec.Taints)
		}
	}
	if cordoned != 1 {
		t.Errorf("%d cordoned nodes, want 1", cordoned)
	}
}

func TestNodesCordonedAndNotReady(t *testing.T) {
	nodes, err := Nodes([]NodeSpec{{InstanceType: "ml.g5.8xlarge", Count: 5, Cordoned: 2, NotReady: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range nodes {
		state := "ready"
		if n.Status.Conditions[0].Status != corev1.ConditionTrue {
			state = "notready"
		}
		if n.Spec.Unschedulable {
			state += "+cordoned"
		}
		got = append(got, n.Name+"="+state)
	}
	want := []string{
		"hyperpod-i-g5-8xlarge-1=ready",
		"hyperpod-i-g5-8xlarge-2=ready",
		"hyperpod-i-g5-8xlarge-3=notready",
		"hyperpod-i-g5-8xlarge-4=ready+cordoned",
		"hyperpod-i-g5-8xlarge-5=ready+cordoned",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestNodesSameTypeInTwoSpecs(t *testing.T) {
	nodes, err := Nodes([]NodeSpec{{InstanceType: "ml.c5.large", Count: 1}, {InstanceType: "ml.c5.large", Count: 2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(nodes), " "); got != "hyperpod-i-c5-large-1 hyperpod-i-c5-large-2 hyperpod-i-c5-large-3" {
		t.Errorf("names %s", got)
	}
}

func TestNodesFractionalMemory(t *testing.T) {
	nodes, err := Nodes([]NodeSpec{{InstanceType: "ml.c5n.large", Count: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantRes(t, nodes[0], corev1.ResourceMemory, "5376Mi") // 5.25 GiB
}

func TestNodesInvalid(t *testing.T) {
	for _, s := range []NodeSpec{
		{InstanceType: "ml.nope.xlarge", Count: 1},
		{InstanceType: "ml.c5.large", Count: 0},
		{InstanceType: "ml.c5.large", Count: 2, Cordoned: 2, NotReady: 1},
		{InstanceType: "ml.c5.large", Count: 2, Cordoned: -1},
	} {
		if _, err := Nodes([]NodeSpec{s}, nil); err == nil {
			t.Errorf("Nodes(%+v): no error", s)
		}
		if _, err := ExpectedTotals([]NodeSpec{s}, nil); err == nil {
			t.Errorf("ExpectedTotals(%+v): no error", s)
		}
	}
}

func TestExpectedTotals(t *testing.T) {
	got, err := ExpectedTotals(Fleet, catalog.Builtin())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Totals{
		"ml.g5.12xlarge": {InstanceType: "ml.g5.12xlarge", Nodes: 4, SchedulableNodes: 4,
			AcceleratorResource: catalog.ResourceNvidiaGPU, Accelerators: 16, VCPU: 192, MemoryGiB: 768, EFA: 4, Pods: 440},
		"ml.p5.48xlarge": {InstanceType: "ml.p5.48xlarge", Nodes: 2, SchedulableNodes: 2,
			AcceleratorResource: catalog.ResourceNvidiaGPU, Accelerators: 16, VCPU: 384, MemoryGiB: 4096, EFA: 64, Pods: 220},
		"ml.trn1.32xlarge": {InstanceType: "ml.trn1.32xlarge", Nodes: 2, SchedulableNodes: 2,
			AcceleratorResource: catalog.ResourceNeuronDevice, Accelerators: 32, VCPU: 256, MemoryGiB: 1024, EFA: 16, Pods: 220},
		"ml.c5.4xlarge": {InstanceType: "ml.c5.4xlarge", Nodes: 4, SchedulableNodes: 3, CordonedNodes: 1,
			VCPU: 64, MemoryGiB: 128, Pods: 440},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d types, want %d: %+v", len(got), len(want), got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got  %+v\n want %+v", k, got[k], w)
		}
	}
}

// The totals agree with summing the Node objects themselves.
func TestExpectedTotalsMatchNodes(t *testing.T) {
	fleet := append([]NodeSpec{{InstanceType: "ml.g6e.24xlarge", Count: 3, NotReady: 1, Cordoned: 1}}, Fleet...)
	nodes, err := Nodes(fleet, nil)
	if err != nil {
		t.Fatal(err)
	}
	totals, err := ExpectedTotals(fleet, nil)
	if err != nil {
		t.Fatal(err)
	}
	items := make([]corev1.Node, len(nodes))
	for i, n := range nodes {
		items[i] = *n
	}
	got := SumNodes(items)
	for k, w := range totals {
		if got[k] != w {
			t.Errorf("%s:\n summed %+v\n totals %+v", k, got[k], w)
		}
	}
	if len(got) != len(totals) {
		t.Errorf("summed %d types, totals %d", len(got), len(totals))
	}
}

func TestAssetsDirResolution(t *testing.T) {
	t.Setenv(EnvAssetsDir, "")
	t.Setenv(EnvKueueVersion, "")
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	got, err := DefaultAssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := "/x/cache/terraform-provider-hyperpod/controlplane/k8s-v1.37.2_etcd-v3.7.0_kueue-v0.19.2"; got != want {
		t.Errorf("DefaultAssetsDir() = %q, want %q", got, want)
	}
	t.Setenv(EnvKueueVersion, "v0.15.0")
	if got, _ := DefaultAssetsDir(); !strings.HasSuffix(got, "_kueue-v0.15.0") {
		t.Errorf("DefaultAssetsDir() with %s=v0.15.0 = %q", EnvKueueVersion, got)
	}
	t.Setenv(EnvKueueVersion, "")

	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got, _ := DefaultAssetsDir(); !strings.HasPrefix(got, "/home/u/.cache/terraform-provider-hyperpod/controlplane/") {
		t.Errorf("DefaultAssetsDir() without XDG_CACHE_HOME = %q", got)
	}

	dir := t.TempDir()
	t.Setenv(EnvAssetsDir, dir)
	_, err = AssetsDirFromEnv()
	if !errors.Is(err, ErrAssetsMissing) || !strings.Contains(err.Error(), "make controlplane") ||
		!strings.Contains(err.Error(), "kube-apiserver, etcd, crds/*.yaml") {
		t.Errorf("AssetsDirFromEnv() on an empty dir: %v", err)
	}

	for _, name := range []string{APIServerBinary, EtcdBinary} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if !HasBinaries(dir) {
		t.Error("HasBinaries = false with both binaries")
	}
	if _, err := AssetsDirFromEnv(); err == nil || !strings.Contains(err.Error(), "crds/*.yaml") {
		t.Errorf("AssetsDirFromEnv() without CRDs: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, CRDsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CRDsDir, "a.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	writeJobCRDs(t, dir)
	if got, err := AssetsDirFromEnv(); err != nil || got != dir {
		t.Errorf("AssetsDirFromEnv() = %q, %v; want %q", got, err, dir)
	}
	if err := os.Chmod(filepath.Join(dir, EtcdBinary), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckAssets(dir); err == nil || !strings.Contains(err.Error(), "no etcd") {
		t.Errorf("CheckAssets with a non-executable etcd: %v", err)
	}
}

func TestStartFailsFastWithoutBinaries(t *testing.T) {
	_, err := Start(t.Context(), Options{AssetsDir: t.TempDir(), WorkDir: t.TempDir()})
	if !errors.Is(err, ErrAssetsMissing) {
		t.Fatalf("Start without binaries: %v", err)
	}
}

func wantRes(t *testing.T, n *corev1.Node, name corev1.ResourceName, want string) {
	t.Helper()
	if n == nil {
		t.Errorf("missing node")
		return
	}
	got, ok := n.Status.Allocatable[name]
	if !ok || got.Cmp(resource.MustParse(want)) != 0 {
		t.Errorf("%s: allocatable %s = %v (present %v), want %s", n.Name, name, got.String(), ok, want)
	}
}

func names(nodes []*corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}
