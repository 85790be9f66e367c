package acctest

import (
	"reflect"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

func TestObjectsAsTheDynamicClientSendsThem(t *testing.T) {
	for _, c := range []struct {
		name string
		got  map[string]any
		want map[string]any
	}{
		{
			"local queue",
			MakeLocalQueue("lq", "ns").ClusterQueue("cq").Labels(map[string]string{"a": "b"}).Unstructured().Object,
			map[string]any{
				"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
				"metadata": map[string]any{"name": "lq", "namespace": "ns", "labels": map[string]any{"a": "b"}},
				"spec":     map[string]any{"clusterQueue": "cq"},
			},
		},
		{
			"resource flavor",
			MakeResourceFlavor("ml.g5.12xlarge").Unstructured().Object,
			map[string]any{
				"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
				"metadata": map[string]any{"name": "ml.g5.12xlarge"},
				"spec":     map[string]any{"nodeLabels": map[string]any{quota.LabelInstanceType: "ml.g5.12xlarge"}},
			},
		},
		{
			"workload priority class",
			MakeWorkloadPriorityClass("p").Value(7).Unstructured().Object,
			map[string]any{
				"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
				"metadata": map[string]any{"name": "p"},
				"value":    int64(7),
			},
		},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.name, c.got, c.want)
		}
	}
}

func TestClusterQueueFlavor(t *testing.T) {
	cq := MakeClusterQueue("cq").Flavor("ml.g5.12xlarge", Nominal{CPU: "48", Memory: "192Gi", Accelerators: "4"}).Obj()
	got := map[string]string{}
	for _, r := range cq.Spec.ResourceGroups[0].Flavors[0].Resources {
		got[string(r.Name)] = r.NominalQuota.String()
	}
	want := map[string]string{"cpu": "48", "memory": "192Gi", "nvidia.com/gpu": "4", "aws.amazon.com/neurondevice": "0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nominal quotas %v, want %v", got, want)
	}
	u := MakeClusterQueue("cq").Unstructured()
	if _, ok := u.Object["metadata"].(map[string]any)["creationTimestamp"]; ok {
		t.Error("the unstructured ClusterQueue carries a creationTimestamp")
	}
}
