package admission_test

// Putting a differential scenario on the test cluster: what every scenario shares, its queues,
// priority classes and jobs, its quota change, and its cleanup.

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// probeClassName is the WorkloadPriorityClass of the settle probes: below every scenario
// priority (the classes' weights are 1-100 and a job without a class has 0).
const probeClassName = "differential-settle-probe"

// ensureCommon creates what every scenario shares, when missing: the instance types'
// ResourceFlavors and the probes' priority class. It returns a cleanup that deletes what it
// created.
func (k kueueCluster) ensureCommon(ctx context.Context) (cleanup func(context.Context) error, err error) {
	var created []func(context.Context) error
	cleanup = func(ctx context.Context) error {
		for _, del := range slices.Backward(created) {
			if err := del(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	for _, it := range []string{bigGPU, smallGPU} {
		rf := acctest.MakeResourceFlavor(it).Unstructured()
		if _, err := k.dyn.Resource(kueue.ResourceFlavors).Create(ctx, rf, metav1.CreateOptions{}); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return cleanup, fmt.Errorf("creating ResourceFlavor %s: %w", it, err)
		}
		created = append(created, func(ctx context.Context) error {
			return k.deleteAndWait(ctx, kueue.ResourceFlavors, "", it)
		})
	}
	wpc := acctest.MakeWorkloadPriorityClass(probeClassName).Value(-1).Unstructured()
	if _, err := k.dyn.Resource(kueue.WorkloadPriorityClasses).Create(ctx, wpc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return cleanup, fmt.Errorf("creating WorkloadPriorityClass %s: %w", probeClassName, err)
	}
	created = append(created, func(ctx context.Context) error {
		return k.deleteAndWait(ctx, kueue.WorkloadPriorityClasses, "", probeClassName)
	})
	return cleanup, nil
}

// create creates the scenario's priority classes, team namespaces (each with its LocalQueue,
// and a probe namespace and an outside namespace feeding the same ClusterQueue) and
// ClusterQueues.
func (k kueueCluster) create(ctx context.Context, sc scenario) error {
	for _, c := range sc.classes {
		wpc := quota.RenderPriorityClass(c, "")
		if err := k.createTyped(ctx, kueue.WorkloadPriorityClasses, "", &wpc); err != nil {
			return err
		}
	}
	queues, err := renderQueues(sc.configs())
	if err != nil {
		return err
	}
	for _, cfg := range sc.teams {
		team := cfg.Team
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: quota.NamespaceName(team), Labels: quota.NamespaceLabels(team)}}
		probe := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNamespace(team)}}
		outside := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: outsideNamespace(team)}}
		for _, n := range []*corev1.Namespace{ns, probe, outside} {
			if _, err := k.cs.CoreV1().Namespaces().Create(ctx, n, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating namespace %s: %w", n.Name, err)
			}
			lq := quota.RenderLocalQueue(team, "")
			lq.Namespace = n.Name
			if err := k.createTyped(ctx, kueue.LocalQueues, n.Name, &lq); err != nil {
				return err
			}
		}
	}
	for i := range queues {
		if err := k.createTyped(ctx, kueue.ClusterQueues, "", &queues[i]); err != nil {
			return err
		}
	}
	return k.waitClusterQueuesObserved(ctx, sc.queues().teams)
}

func (k kueueCluster) createTyped(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj any) error {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	if _, err := k.dyn.Resource(gvr).Namespace(namespace).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

// submit creates the scenario's jobs in order.
func (k kueueCluster) submit(ctx context.Context, jobs []jobSpec) error {
	for _, j := range jobs {
		if err := k.submitJob(ctx, j); err != nil {
			return err
		}
	}
	return nil
}

// podRequests are one pod's requests: its GPUs, 4 vCPU and 16 GiB per GPU (less than either
// instance type's share per GPU, so the GPUs decide).
func podRequests(gpus int64) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:        *k8sresource.NewQuantity(4*gpus, k8sresource.DecimalSI),
		corev1.ResourceMemory:     *k8sresource.NewQuantity(16*gpus<<30, k8sresource.BinarySI),
		catalog.ResourceNvidiaGPU: *k8sresource.NewQuantity(gpus, k8sresource.DecimalSI),
	}
}

func (k kueueCluster) submitJob(ctx context.Context, j jobSpec) error {
	ns := quota.NamespaceName(j.team)
	if j.outside {
		ns = outsideNamespace(j.team)
	}
	if j.pytorch {
		w := acctest.MakePyTorchJob(j.name, ns).Queue(quota.LocalQueueName(j.team))
		if j.class != "" {
			w.PriorityClass(quota.PriorityClassObjectName(j.class))
		}
		for _, rs := range j.replicas {
			w.Replicas(rs.role, rs.count, j.instanceType, podRequests(rs.gpus))
		}
		if _, err := k.dyn.Resource(pytorchJobs).Namespace(ns).Create(ctx, w.Unstructured(), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating PyTorchJob %s/%s: %w", ns, j.name, err)
		}
		return nil
	}
	labels := map[string]string{"kueue.x-k8s.io/queue-name": quota.LocalQueueName(j.team)}
	if j.class != "" {
		labels[kueue.PriorityClassLabel] = quota.PriorityClassObjectName(j.class)
	}
	rs := j.replicas[0]
	req := podRequests(rs.gpus)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{
			Suspend:     ptr.To(true),
			Parallelism: ptr.To(int32(rs.count)),
			Completions: ptr.To(int32(rs.count)),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				NodeSelector:  map[string]string{quota.LabelInstanceType: j.instanceType},
				Containers: []corev1.Container{{Name: "main", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: req,
						Limits: corev1.ResourceList{catalog.ResourceNvidiaGPU: req[catalog.ResourceNvidiaGPU]}}}},
			}},
		},
	}
	if _, err := k.cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Job %s/%s: %w", ns, j.name, err)
	}
	return nil
}

// applyChange writes the planned ClusterQueues over the live ones, as the provider's apply
// does (server-side apply), and deletes those planned as being deleted; then it waits until
// Kueue has taken the new specs in.
func (k kueueCluster) applyChange(ctx context.Context, sc scenario, planned []kueue.ClusterQueue) error {
	for i := range planned {
		name := planned[i].Name
		if planned[i].DeletionTimestamp != nil {
			if err := k.dyn.Resource(kueue.ClusterQueues).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				return fmt.Errorf("deleting ClusterQueue %s: %w", name, err)
			}
			continue
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&planned[i])
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: content}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		if _, err := k.dyn.Resource(kueue.ClusterQueues).Apply(ctx, name, u,
			metav1.ApplyOptions{FieldManager: quota.FieldManager, Force: true}); err != nil {
			return fmt.Errorf("applying ClusterQueue %s: %w", name, err)
		}
	}
	return k.waitClusterQueuesObserved(ctx, sc.queues().teams)
}

// cleanup deletes everything of a scenario and waits until it is gone: jobs and Workloads
// first (so Kueue releases the quota and the ClusterQueues' finalizers go), then the
// ClusterQueues, namespaces and priority classes. Objects already gone are no error, so it
// also clears what an earlier, interrupted run of the seed left.
func (k kueueCluster) cleanup(ctx context.Context, sc scenario) error {
	for _, cfg := range sc.teams {
		for _, ns := range []string{quota.NamespaceName(cfg.Team), probeNamespace(cfg.Team), outsideNamespace(cfg.Team)} {
			if err := k.deleteJobsAndWorkloads(ctx, ns); err != nil {
				return err
			}
		}
	}
	for _, cfg := range sc.teams {
		if err := k.deleteAndWait(ctx, kueue.ClusterQueues, "", quota.ClusterQueueName(cfg.Team)); err != nil {
			return err
		}
		for _, ns := range []string{quota.NamespaceName(cfg.Team), probeNamespace(cfg.Team), outsideNamespace(cfg.Team)} {
			if err := k.deleteAndWait(ctx, namespaces, "", ns); err != nil {
				return err
			}
		}
	}
	for _, c := range sc.classes {
		if err := k.deleteAndWait(ctx, kueue.WorkloadPriorityClasses, "", quota.PriorityClassObjectName(c.Name)); err != nil {
			return err
		}
	}
	return nil
}

// deleteAndWait deletes an object and waits until it is gone.
func (k kueueCluster) deleteAndWait(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) error {
	ri := k.dyn.Resource(gvr).Namespace(namespace)
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s: %w", gvr.Resource, name, err)
	}
	return acctest.Eventually(ctx, observeTimeout, fmt.Sprintf("%s %s is gone", gvr.Resource, name), func(context.Context) (bool, string, error) {
		_, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "still there", err
	})
}
