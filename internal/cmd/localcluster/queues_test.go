package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

func object(kind, namespace, name string, labels map[string]any, spec map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": name, "labels": labels}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kueue.GroupVersion.String(), "kind": kind, "metadata": meta, "spec": spec,
	}}
}

func TestPrintQueues(t *testing.T) {
	managed := map[string]any{quota.LabelManagedBy: quota.ManagedByValue, quota.LabelQuotaAllocationID: "inference"}
	cq := object(kueue.KindClusterQueue, "", "hyperpod-ns-inference-clusterqueue", managed, map[string]any{
		"cohortName": "hyperpod-cohort",
		"stopPolicy": "Hold",
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu", "aws.amazon.com/neurondevice"},
			"flavors": []any{map[string]any{"name": "ml.g5.12xlarge", "resources": []any{
				map[string]any{"name": "cpu", "nominalQuota": "96", "borrowingLimit": "0", "lendingLimit": "0"},
				// Spelled differently from the provider's canonical "384Gi": printed as stored.
				map[string]any{"name": "memory", "nominalQuota": "393216Mi", "borrowingLimit": "0", "lendingLimit": "0"},
				map[string]any{"name": "nvidia.com/gpu", "nominalQuota": int64(8)},
				map[string]any{"name": "aws.amazon.com/neurondevice", "nominalQuota": "0"},
			}}},
		}},
	})
	foreign := object(kueue.KindClusterQueue, "", "someone-elses", map[string]any{"app.kubernetes.io/managed-by": "other"}, map[string]any{})
	lq := object(kueue.KindLocalQueue, "hyperpod-ns-inference", "hyperpod-ns-inference-localqueue",
		map[string]any{quota.LabelManagedBy: quota.ManagedByValue}, map[string]any{"clusterQueue": "hyperpod-ns-inference-clusterqueue"})
	lqOnly := object(kueue.KindLocalQueue, "hyperpod-ns-data-prep", "hyperpod-ns-data-prep-localqueue",
		map[string]any{quota.LabelManagedBy: quota.ManagedByValue}, map[string]any{"clusterQueue": "hyperpod-ns-data-prep-clusterqueue"})

	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		kueue.ClusterQueues: "ClusterQueueList",
		kueue.LocalQueues:   "LocalQueueList",
	}, cq, foreign, lq, lqOnly)

	for _, all := range []bool{false, true} {
		var out bytes.Buffer
		if err := printQueues(context.Background(), dc, "https://example", all, &out); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		for _, want := range []string{
			"Team data-prep\n  ClusterQueue:  (none managed by this provider)\n  LocalQueue:    hyperpod-ns-data-prep/hyperpod-ns-data-prep-localqueue -> hyperpod-ns-data-prep-clusterqueue",
			"Team inference\n  ClusterQueue:  hyperpod-ns-inference-clusterqueue",
			"cohort:        hyperpod-cohort    stopPolicy: Hold",
			"393216Mi",
			"LocalQueue:    hyperpod-ns-inference/hyperpod-ns-inference-localqueue -> hyperpod-ns-inference-clusterqueue",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("all=%v: output lacks %q:\n%s", all, want, got)
			}
		}
		if strings.Contains(got, "someone-elses") {
			t.Errorf("output lists a ClusterQueue another manager owns:\n%s", got)
		}
		if strings.Index(got, "Team data-prep") > strings.Index(got, "Team inference") {
			t.Errorf("teams are not sorted:\n%s", got)
		}
		gpu := regexp.MustCompile(`\n  ml\.g5\.12xlarge +nvidia\.com/gpu +8 +- +-\n`)
		neuron := regexp.MustCompile(`aws\.amazon\.com/neurondevice +0 `)
		if all != neuron.MatchString(got) || !gpu.MatchString(got) {
			t.Errorf("all=%v: zero rows shown only with --all, unset limits as '-':\n%s", all, got)
		}
		if !all && !strings.Contains(got, "(1 resource with zero quota and limits not shown; --all shows them)") {
			t.Errorf("hidden rows not counted:\n%s", got)
		}
	}
}

func TestIsZero(t *testing.T) {
	for q, want := range map[string]bool{"": true, "0": true, "0m": true, "0Gi": true, "0.000": true,
		"1": false, "100m": false, "0.5": false, "10Gi": false, "2Ti": false} {
		if got := isZero(q); got != want {
			t.Errorf("isZero(%q) = %v, want %v", q, got, want)
		}
	}
}
