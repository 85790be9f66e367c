// Package sagemakerbackend stores quotas through the SageMaker API, for HyperPod clusters whose
// Kueue belongs to AWS's task-governance add-on: a team's quota is the cluster's compute quota
// that targets the team, and the add-on turns it into Kueue objects. Reading Kueue's status
// (team usage) and Nodes (capacity) stays a Kubernetes read, safe on such clusters, when the
// provider also has a Kubernetes connection.
package sagemakerbackend

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker"
	"github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend/kueuebackend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/capacity"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// New returns the SageMaker backend of the cluster clusterARN. kubernetes is the provider's
// Kubernetes connection, or nil when it has none: Nodes and Kueue's status are read through
// it, and team namespaces written (their LocalQueues are the add-on's).
func New(api sagemakerclient.API, clusterARN string, cat *catalog.Catalog, poll sagemakerclient.Poll, kubernetes *kube.Client) backend.Backend {
	quotas := &teamQuotas{api: api, cluster: clusterARN, catalog: cat, poll: poll}
	b := backend.Backend{
		Quotas:           quotas,
		QuotaDetails:     quotas,
		Scheduler:        &schedulerConfigs{api: api, cluster: clusterARN, poll: poll},
		Capacity:         &clusterCapacity{api: api, cluster: clusterARN, catalog: cat, quotas: quotas},
		Usage:            needsKubernetes{},
		Kueue:            needsKubernetes{},
		Namespaces:       needsKubernetes{},
		NamespaceDetails: needsKubernetes{},
		Claims:           noClaims{},
		Words:            words{},
		Ready:            readiness{},
		QuotaList:        quotas,
		NamespaceList:    needsKubernetes{},
		Cluster:          clusterARN,
		Traits: backend.Traits{AssignsIDs: true, CreatesWithContent: true, StoreLimits: quota.StoreLimits{Float32Amounts: true, Unsupported: map[string]string{
			"cohort": "the SageMaker API has no cohort field: the task-governance add-on decides how teams share idle " +
				"capacity from resource_sharing and fair_share_weight",
			"resources.efa": "the SageMaker API has no EFA field: the task-governance add-on decides the EFA quota of " +
				"each instance type",
		}}},
	}
	if kubernetes != nil {
		reads := kueuebackend.New(kubernetes, cat)
		b.Capacity.(*clusterCapacity).nodes = reads.Capacity
		b.Usage = reads.Usage
		b.Ready = readiness{kueue: reads.Ready}
		b.Kueue = kueuebackend.KueueStateBesideAddon(kubernetes, grantPreviewReads)
		namespaces := kueuebackend.NamespacesBesideAddon(kubernetes)
		b.Namespaces, b.NamespaceDetails, b.NamespaceList = namespaces.TeamNamespaces, namespaces.NamespaceDetails, namespaces.NamespaceList
	}
	return b
}

// sageMakerOwner names the manager of an object the API holds: the API records none.
const sageMakerOwner = "whoever created it through the SageMaker API (another configuration, the console or the AWS CLI)"

// needsKubernetes answers reads that only Kueue's objects can answer when there is no
// Kubernetes connection.
type needsKubernetes struct{}

// errNeedsKubernetes says what needs the connection and how to configure it.
func errNeedsKubernetes(what string) error {
	return backend.Problem{Summary: "Kubernetes connection needed", Detail: what + ", which only Kubernetes has: the " +
		"SageMaker API does not hold it. Configure a Kubernetes connection in the provider block beside task_governance " +
		"(config_path, host and token, an exec block with aws eks get-token, or KUBE_CONFIG_PATH). Reading Kueue's status " +
		"and writing team namespaces is safe on a cluster with the task-governance add-on."}
}

func (needsKubernetes) Usage(context.Context, string) (*quota.Usage, error) {
	return nil, errUsageNeedsKubernetes
}

func (needsKubernetes) Snapshot(context.Context) (backend.KueueSnapshot, error) {
	return backend.KueueSnapshot{}, errNeedsKubernetes("Previewing what a change does to jobs reads the add-on's Kueue objects and Workloads")
}

// AddonPlacement places a quota as the task-governance add-on writes it, for a plan's review.
func AddonPlacement() backend.Placement {
	return kueuebackend.PlacementBesideAddon()
}

// WithQuota needs no connection: it only places the quota in a snapshot.
func (needsKubernetes) WithQuota(c admission.Cluster, cat *catalog.Catalog, team string, planned *quota.ResolvedConfig) (admission.Cluster, string, error) {
	return AddonPlacement().WithQuota(c, cat, team, planned)
}

// grantPreviewReads says what grants the admission preview's reads on a cluster with the
// task-governance add-on.
const grantPreviewReads = "The ClusterRole hyperpod-provider-task-governance in " +
	"examples/rbac/task-governance-clusterrole.yaml grants every read the provider makes over Kubernetes: apply it " +
	"and bind it to the identity the provider authenticates as, or turn previews off with admission_preview = false " +
	"in the provider block (or HYPERPOD_ADMISSION_PREVIEW=false). A job that only plans, such as a pull request's " +
	"review, needs only the read-only ClusterRole hyperpod-plan-review in examples/rbac/plan-review-clusterrole.yaml " +
	"over Kubernetes."

var errNamespaces = errNeedsKubernetes("A team's namespace is a Kubernetes Namespace")

func (needsKubernetes) Get(context.Context, string) (*backend.TeamNamespace, error) {
	return nil, errNamespaces
}
func (needsKubernetes) Claim(context.Context, string, string) error         { return errNamespaces }
func (needsKubernetes) WaitGone(context.Context, string) error              { return errNamespaces }
func (needsKubernetes) Adopt(context.Context, *backend.TeamNamespace) error { return errNamespaces }
func (needsKubernetes) Put(context.Context, string, map[string]string, map[string]string, string, *backend.TeamNamespace) error {
	return errNamespaces
}
func (needsKubernetes) Delete(context.Context, string) error           { return errNamespaces }
func (needsKubernetes) Work(context.Context, string) (int, int, error) { return 0, 0, errNamespaces }
func (needsKubernetes) Drift(*backend.TeamNamespace, string, string) ([]string, error) {
	return nil, errNamespaces
}
func (needsKubernetes) Imported(*backend.TeamNamespace) (map[string]string, map[string]string, error) {
	return nil, nil, errNamespaces
}
func (needsKubernetes) List(context.Context, string, func([]*backend.TeamNamespace) error) error {
	return errNamespaces
}

// readiness: a team's usage is the status of the add-on's ClusterQueue, read over Kubernetes
// (kueue: the Kubernetes connection's readiness, nil without one); an instance type's capacity
// is the API's instance groups and compute quotas, with the Nodes where there is a connection.
type readiness struct{ kueue backend.Readiness }

// errUsageNeedsKubernetes is why a team's usage cannot be read without a Kubernetes connection.
var errUsageNeedsKubernetes = errNeedsKubernetes("A team's usage is the status of its ClusterQueue")

func (r readiness) UsageReady(team string, pending []string) error {
	if r.kueue == nil {
		return errUsageNeedsKubernetes
	}
	return r.kueue.UsageReady(team, pending)
}

func (r readiness) CapacityReady(_ string, pending []string) error {
	if len(pending) == 0 {
		return nil
	}
	what := "read the cluster's instance groups and compute quotas through the SageMaker API"
	if r.kueue != nil {
		what += ", and its Nodes"
	}
	return backend.NotKnownYet(what, pending)
}

// NoUsage: the add-on writes a team's ClusterQueue from its compute quota.
func (r readiness) NoUsage(team string) backend.Problem {
	if r.kueue == nil {
		return errUsageNeedsKubernetes.(backend.Problem)
	}
	return r.kueue.NoUsage(team)
}

// noClaims: a create on this path claims nothing before its single request.
type noClaims struct{}

func (noClaims) Abandon(context.Context, backend.ObjectRef, string)                 {}
func (noClaims) MarkUnconfirmed(context.Context, backend.ObjectRef, string, string) {}

// clusterCapacity counts the instances DescribeCluster reports in the type's instance groups,
// with what their Nodes show when there is a Kubernetes connection, and sums the amounts of
// the cluster's compute quotas.
type clusterCapacity struct {
	api     sagemakerclient.API
	cluster string
	catalog *catalog.Catalog
	quotas  *teamQuotas
	nodes   backend.Capacity // nil without a Kubernetes connection
}

func (c *clusterCapacity) Nodes(ctx context.Context, instanceType string) ([]capacity.Node, error) {
	out, err := c.api.DescribeCluster(ctx, &sagemaker.DescribeClusterInput{ClusterName: aws.String(c.cluster)})
	if err != nil {
		return nil, &backend.RequestError{Op: backend.OpRead, Kind: "SageMaker HyperPod cluster", Name: c.cluster, Err: err}
	}
	var instances, inService int
	for _, g := range out.InstanceGroups {
		if string(g.InstanceType) != instanceType {
			continue
		}
		n := int(aws.ToInt32(g.CurrentCount))
		instances += n
		if g.Status == types.InstanceGroupStatusInservice {
			inService += n
		}
	}
	if c.nodes != nil {
		nodes, err := c.nodes.Nodes(ctx, instanceType)
		if err != nil {
			return nil, err
		}
		// Instances that have not joined the cluster as Nodes count, not Ready and empty; the
		// Nodes' own readiness and health status decide the rest.
		for len(nodes) < instances {
			nodes = append(nodes, capacity.Node{})
		}
		return nodes, nil
	}
	it, ok := c.catalog.Lookup(instanceType)
	if !ok {
		return nil, fmt.Errorf("instance type %q is not in the catalog", instanceType)
	}
	nodes := make([]capacity.Node, instances)
	for i := range nodes {
		nodes[i] = capacity.NodeFromFigures(it, i < inService)
	}
	return nodes, nil
}

// Allocations sums the cluster's compute quotas from the list every read of the run shares.
func (c *clusterCapacity) Allocations(ctx context.Context, instanceType string) ([]capacity.Allocation, error) {
	it, _ := c.catalog.Lookup(instanceType)
	all, err := c.quotas.all(ctx)
	if err != nil {
		return nil, err
	}
	var out []capacity.Allocation
	for _, q := range all {
		if !live(q.Status) || q.ComputeQuotaConfig == nil {
			continue
		}
		doc := documentOf(aws.ToString(q.Name), "", q.ActivationState, q.ComputeQuotaTarget, q.ComputeQuotaConfig)
		for _, r := range doc.Resources {
			if r.InstanceType == instanceType {
				out = append(out, capacity.AllocationOf(it.AcceleratorResource, r.Accelerators, r.VCPU, r.MemoryGiB))
			}
		}
	}
	return out, nil
}
