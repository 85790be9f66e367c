package localcluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

func TestReadJobsQuickstart(t *testing.T) {
	jobs, err := ReadJobs(filepath.Join("..", "..", "examples", "quickstart", "jobs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		if j.Spec.Suspend == nil || !*j.Spec.Suspend {
			t.Errorf("job %s is not suspended: Kueue must decide when it starts", j.Name)
		}
		if q := j.Labels["kueue.x-k8s.io/queue-name"]; q != j.Namespace+"-localqueue" {
			t.Errorf("job %s/%s is labelled for queue %q, not its team's", j.Namespace, j.Name, q)
		}
		got = append(got, j.Namespace+"/"+j.Name+"@"+j.Labels["kueue.x-k8s.io/priority-class"])
	}
	want := "hyperpod-ns-ml-research/pretrain@training-priority hyperpod-ns-ml-research/ablation@experimentation-priority " +
		"hyperpod-ns-inference/llm-serve@inference-priority hyperpod-ns-inference/batch-eval@experimentation-priority " +
		"hyperpod-ns-data-prep/features@training-priority"
	if strings.Join(got, " ") != want {
		t.Errorf("jobs %v, want %s", got, want)
	}
}

func TestReadJobsRejectsOtherObjects(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.yaml")
	writeFile(t, path, "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n}\n")
	if _, err := ReadJobs(path); err == nil || !strings.Contains(err.Error(), "not a batch/v1 Job") {
		t.Errorf("a Pod: err %v", err)
	}
	writeFile(t, path, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: n}\nspec: {suspnd: true}\n")
	if _, err := ReadJobs(path); err == nil {
		t.Error("a misspelt field was accepted")
	}
}

func workload(conditions []any, extra map[string]any) *unstructured.Unstructured {
	w := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "job-x-1", "namespace": "ns",
			"ownerReferences": []any{map[string]any{"kind": "Job", "name": "x", "apiVersion": "batch/v1", "uid": "u"}}},
		"spec":   map[string]any{"priority": int64(75), "priorityClassRef": map[string]any{"name": "training-priority"}},
		"status": map[string]any{"conditions": conditions},
	}}
	for k, v := range extra {
		w.Object["status"].(map[string]any)[k] = v
	}
	return w
}

func cond(typ, status, reason, message string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message}
}

func TestDecisionOf(t *testing.T) {
	admission := map[string]any{"podSetAssignments": []any{map[string]any{"name": "main", "flavors": map[string]any{
		"cpu": "ml.p5.48xlarge", "nvidia.com/gpu": "ml.p5.48xlarge"}}}}
	tests := []struct {
		name string
		w    *unstructured.Unstructured
		want string
	}{
		{"undecided", workload(nil, nil), "||"},
		{"admitted", workload([]any{cond("QuotaReserved", "True", "QuotaReserved", ""), cond("Admitted", "True", "Admitted", "")},
			map[string]any{"admission": admission}), "Admitted|ml.p5.48xlarge|"},
		{"pending", workload([]any{cond("QuotaReserved", "False", "Pending", "insufficient quota")}, nil), "Pending||Pending: insufficient quota"},
		{"evicted", workload([]any{cond("Admitted", "True", "Admitted", ""), cond("Evicted", "True", "Preempted", "by a higher priority")}, nil),
			"Evicted||Preempted: by a higher priority"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DecisionOf(tt.w)
			if d.Job != "x" || d.Namespace != "ns" || d.PriorityClass != "training-priority" || d.Priority != 75 {
				t.Errorf("identity %+v", d)
			}
			reason := ""
			if d.Reason != "" {
				reason = d.Reason + ": " + d.Message
			}
			if got := d.State + "|" + strings.Join(d.Flavors, ",") + "|" + reason; got != tt.want {
				t.Errorf("decision %q, want %q", got, tt.want)
			}
		})
	}
	var buf bytes.Buffer
	FormatDecisions(&buf, []JobDecision{DecisionOf(tests[2].w), DecisionOf(tests[1].w)})
	out := buf.String()
	for _, want := range []string{"ns/x", "training-priority (75)", "Pending", "insufficient quota", "Admitted", "ml.p5.48xlarge"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// SubmitJobs returns only once the jobs' ClusterQueues count them in their status, which Kueue
// writes a moment after its decisions.
func TestWaitQueueStatus(t *testing.T) {
	job := func(ns, name string) batchv1.Job {
		return batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{LabelQueueName: ns + "-localqueue"}}}
	}
	list := []batchv1.Job{job("team-a", "one"), job("team-a", "two"), job("team-b", "three"), job("team-b", "four")}
	decisions := []JobDecision{{State: "Admitted"}, {State: "Pending"}, {State: "Admitted"}, {State: "Evicted"}}
	lq := func(ns string) *unstructured.Unstructured {
		return object(kueue.KindLocalQueue, ns, ns+"-localqueue", nil, map[string]any{"clusterQueue": ns + "-cq"})
	}
	cq := func(name string, admitted, pending int64) *unstructured.Unstructured {
		u := object(kueue.KindClusterQueue, "", name, nil, map[string]any{})
		u.Object["status"] = map[string]any{"admittedWorkloads": admitted, "pendingWorkloads": pending}
		return u
	}
	fake := func(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
		return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
			kueue.ClusterQueues: "ClusterQueueList",
			kueue.LocalQueues:   "LocalQueueList",
		}, objs...)
	}

	// Up to date (team-b's queue also holds a workload of someone else's).
	dc := fake(lq("team-a"), lq("team-b"), cq("team-a-cq", 1, 1), cq("team-b-cq", 2, 0))
	if err := waitQueueStatus(context.Background(), dc, list, decisions, time.Second); err != nil {
		t.Errorf("status up to date: %v", err)
	}

	// team-a's status still lacks the pending job.
	dc = fake(lq("team-a"), lq("team-b"), cq("team-a-cq", 1, 0), cq("team-b-cq", 1, 0))
	err := waitQueueStatus(context.Background(), dc, list, decisions, 300*time.Millisecond)
	if want := "team-a-cq reports 1 admitted and 0 pending workloads, the jobs alone make 1 and 1"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("status behind: %v, want an error saying %q", err, want)
	}
	if err != nil && strings.Contains(err.Error(), "team-b-cq") {
		t.Errorf("an evicted job was counted: %v", err)
	}
}

func object(kind, namespace, name string, labels map[string]any, spec map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": name, "labels": labels}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kueue.GroupVersion.String(), "kind": kind, "metadata": meta, "spec": spec,
	}}
}
