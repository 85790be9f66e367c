package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// LabelQueueName names the LocalQueue a Job is submitted to.
const LabelQueueName = "kueue.x-k8s.io/queue-name"

// Jobs as data scientists submit them to HyperPod teams, and what Kueue decided for each: the
// demo and the quickstart's end-to-end test submit examples/quickstart/jobs.yaml with these.

// ReadJobs decodes a file of batch/v1 Jobs separated by "---".
func ReadJobs(path string) ([]batchv1.Job, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var jobs []batchv1.Job
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var fields map[string]any
		if err := yaml.Unmarshal(doc, &fields); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(fields) == 0 {
			continue // only comments
		}
		var job batchv1.Job
		if err := yaml.UnmarshalStrict(doc, &job); err != nil {
			return nil, fmt.Errorf("%s: job %d: %w", path, len(jobs)+1, err)
		}
		if job.Kind != "Job" || job.APIVersion != "batch/v1" || job.Name == "" || job.Namespace == "" {
			return nil, fmt.Errorf("%s: document %d is not a batch/v1 Job with a name and namespace", path, len(jobs)+1)
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// JobDecision is what Kueue decided for one Job, read from its Workload.
type JobDecision struct {
	Namespace, Job string
	// PriorityClass is the job's kueue.x-k8s.io/priority-class label; Priority is the value
	// Kueue took from it.
	PriorityClass string
	Priority      int64
	// State is "Admitted", "Pending" or "Evicted" ("" while Kueue has not decided).
	State string
	// Flavors are the instance types the admission assigned.
	Flavors []string
	// Reason and Message explain a pending or evicted workload (Kueue's words).
	Reason, Message string
}

// DecisionOf reads Kueue's decision from a Workload.
func DecisionOf(w *unstructured.Unstructured) JobDecision {
	d := JobDecision{Namespace: w.GetNamespace()}
	for _, o := range w.GetOwnerReferences() {
		if o.Kind == "Job" {
			d.Job = o.Name
		}
	}
	d.PriorityClass, _, _ = unstructured.NestedString(w.Object, "spec", "priorityClassRef", "name")
	if d.PriorityClass == "" {
		d.PriorityClass, _, _ = unstructured.NestedString(w.Object, "spec", "priorityClassName")
	}
	d.Priority, _, _ = unstructured.NestedInt64(w.Object, "spec", "priority")
	cond := func(typ string) (status, reason, message string) {
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == typ {
				return fmt.Sprint(m["status"]), fmt.Sprint(m["reason"]), fmt.Sprint(m["message"])
			}
		}
		return "", "", ""
	}
	if s, reason, msg := cond("Evicted"); s == "True" {
		d.State, d.Reason, d.Message = "Evicted", reason, msg
		return d
	}
	if s, _, _ := cond("Admitted"); s == "True" {
		d.State = "Admitted"
		assignments, _, _ := unstructured.NestedSlice(w.Object, "status", "admission", "podSetAssignments")
		seen := map[string]bool{}
		for _, a := range assignments {
			flavors, _, _ := unstructured.NestedStringMap(a.(map[string]any), "flavors")
			for _, f := range flavors {
				if !seen[f] {
					seen[f] = true
					d.Flavors = append(d.Flavors, f)
				}
			}
		}
		sort.Strings(d.Flavors)
		return d
	}
	if s, reason, msg := cond("QuotaReserved"); s == "False" {
		d.State, d.Reason, d.Message = "Pending", reason, msg
	}
	return d
}

// SubmitJobs creates the jobs in order, each replacing a Job of the same name (and its
// Workloads), and waits after each until Kueue has decided it, so the decisions do not depend on
// timing. It returns the decisions in the same order.
func SubmitJobs(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, jobs []batchv1.Job, timeout time.Duration) ([]JobDecision, error) {
	if err := DeleteJobs(ctx, cs, dyn, jobs); err != nil {
		return nil, err
	}
	out := make([]JobDecision, 0, len(jobs))
	for i := range jobs {
		job := jobs[i].DeepCopy()
		if _, err := cs.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("creating Job %s/%s: %w", job.Namespace, job.Name, err)
		}
		d, err := WaitDecision(ctx, dyn, job.Namespace, job.Name, timeout)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if err := waitQueueStatus(ctx, dyn, jobs, out, timeout); err != nil {
		return out, err
	}
	return out, nil
}

// WaitDecision waits until Kueue has decided the Job's Workload (admitted, pending for quota or
// evicted) and returns the decision.
func WaitDecision(ctx context.Context, dyn dynamic.Interface, namespace, job string, timeout time.Duration) (JobDecision, error) {
	last := JobDecision{Namespace: namespace, Job: job}
	var w *unstructured.Unstructured
	err := WaitUntil(ctx, time.Now().Add(timeout), pollInterval, func(ctx context.Context) (bool, error) {
		var err error
		if w, err = workloadOfJob(ctx, dyn, namespace, job); err != nil || w == nil {
			return false, err
		}
		last = DecisionOf(w)
		return last.State != "", nil
	}, func() error {
		if w == nil {
			return fmt.Errorf("kueue made no Workload for Job %s/%s within %s: is the Kueue manager running, and is the job labelled with a LocalQueue?", namespace, job, timeout)
		}
		return fmt.Errorf("kueue did not decide Job %s/%s within %s", namespace, job, timeout)
	})
	return last, err
}

// pollInterval is how often the waits for Kueue's decisions read the cluster again.
const pollInterval = 200 * time.Millisecond

// Decisions reads the current decision for each job, without waiting.
func Decisions(ctx context.Context, dyn dynamic.Interface, jobs []batchv1.Job) ([]JobDecision, error) {
	out := make([]JobDecision, 0, len(jobs))
	for _, j := range jobs {
		w, err := workloadOfJob(ctx, dyn, j.Namespace, j.Name)
		if err != nil {
			return nil, err
		}
		d := JobDecision{Namespace: j.Namespace, Job: j.Name}
		if w != nil {
			d = DecisionOf(w)
		}
		out = append(out, d)
	}
	return out, nil
}

func workloadOfJob(ctx context.Context, dyn dynamic.Interface, namespace, job string) (*unstructured.Unstructured, error) {
	list, err := dyn.Resource(kueue.Workloads).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Workloads in %s: %w", namespace, err)
	}
	for i := range list.Items {
		for _, o := range list.Items[i].GetOwnerReferences() {
			if o.Kind == "Job" && o.Name == job {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// DeleteJobs deletes the jobs and then their Workloads (the local control plane has no garbage
// collector), and waits until the Workloads are gone so that Kueue has released their quota.
func DeleteJobs(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, jobs []batchv1.Job) error {
	policy := metav1.DeletePropagationBackground
	for _, j := range jobs {
		err := cs.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Job %s/%s: %w", j.Namespace, j.Name, err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for _, j := range jobs {
		for {
			w, err := workloadOfJob(ctx, dyn, j.Namespace, j.Name)
			if err != nil {
				return err
			}
			if w == nil {
				break
			}
			if w.GetDeletionTimestamp() == nil {
				err := dyn.Resource(kueue.Workloads).Namespace(j.Namespace).Delete(ctx, w.GetName(), metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("deleting Workload %s/%s: %w", j.Namespace, w.GetName(), err)
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("workload %s/%s of Job %s still exists a minute after deletion", j.Namespace, w.GetName(), j.Name)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// FormatDecisions prints decisions as a table: job, priority, what Kueue decided, and why.
func FormatDecisions(w io.Writer, decisions []JobDecision) {
	fmt.Fprintf(w, "%-36s %-31s %-9s %s\n", "JOB", "PRIORITY CLASS (VALUE)", "KUEUE", "WHERE / WHY")
	for _, d := range decisions {
		prio := "-"
		if d.PriorityClass != "" {
			prio = fmt.Sprintf("%s (%d)", d.PriorityClass, d.Priority)
		}
		why := strings.Join(d.Flavors, ", ")
		if d.State != "Admitted" {
			why = d.Message
			if d.Reason != "" && d.Reason != "Pending" {
				why = d.Reason + ": " + why
			}
		}
		state := d.State
		if state == "" {
			state = "-"
		}
		fmt.Fprintf(w, "%-36s %-31s %-9s %s\n", d.Namespace+"/"+d.Job, prio, state, why)
	}
}

// queueCounts are workload counts of one ClusterQueue.
type queueCounts struct{ admitted, pending int64 }

// waitQueueStatus waits until the status of the jobs' ClusterQueues counts at least the
// admitted and pending jobs among decisions. Kueue writes a ClusterQueue's status a moment
// after it decides a workload (it batches those updates), and what reads usage right after
// SubmitJobs (the demo's refresh of data.hyperpod_team_usage, the quickstart test) must find
// the jobs in it. Other
// workloads may share the queues, hence "at least".
func waitQueueStatus(ctx context.Context, dyn dynamic.Interface, list []batchv1.Job, decisions []JobDecision, timeout time.Duration) error {
	want := map[string]queueCounts{}
	clusterQueueOf := map[string]string{} // "namespace/localqueue" -> ClusterQueue
	for i, d := range decisions {
		if i >= len(list) || (d.State != "Admitted" && d.State != "Pending") {
			continue
		}
		lq := list[i].Labels[LabelQueueName]
		if lq == "" {
			continue
		}
		key := list[i].Namespace + "/" + lq
		cq, ok := clusterQueueOf[key]
		if !ok {
			u, err := dyn.Resource(kueue.LocalQueues).Namespace(list[i].Namespace).Get(ctx, lq, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("LocalQueue %s: %w", key, err)
			}
			cq, _, _ = unstructured.NestedString(u.Object, "spec", "clusterQueue")
			clusterQueueOf[key] = cq
		}
		c := want[cq]
		if d.State == "Admitted" {
			c.admitted++
		} else {
			c.pending++
		}
		want[cq] = c
	}

	var behind []string
	return WaitUntil(ctx, time.Now().Add(timeout), pollInterval, func(ctx context.Context) (bool, error) {
		behind = nil
		for _, cq := range slices.Sorted(maps.Keys(want)) {
			u, err := dyn.Resource(kueue.ClusterQueues).Get(ctx, cq, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Errorf("ClusterQueue %s: %w", cq, err)
			}
			var got queueCounts
			got.admitted, _, _ = unstructured.NestedInt64(u.Object, "status", "admittedWorkloads")
			got.pending, _, _ = unstructured.NestedInt64(u.Object, "status", "pendingWorkloads")
			if w := want[cq]; got.admitted < w.admitted || got.pending < w.pending {
				behind = append(behind, fmt.Sprintf("%s reports %d admitted and %d pending workloads, the jobs alone make %d and %d",
					cq, got.admitted, got.pending, w.admitted, w.pending))
			}
		}
		return len(behind) == 0, nil
	}, func() error {
		return fmt.Errorf("kueue did not update the status of the jobs' ClusterQueues within %s: %s", timeout, strings.Join(behind, "; "))
	})
}
