package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

var (
	_ resource.Resource                   = (*teamNamespaceResource)(nil)
	_ resource.ResourceWithConfigure      = (*teamNamespaceResource)(nil)
	_ resource.ResourceWithImportState    = (*teamNamespaceResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*teamNamespaceResource)(nil)
	_ resource.ResourceWithValidateConfig = (*teamNamespaceResource)(nil)
)

// Defaults of the timeouts block. Create also bounds in-place updates, which may have to
// delete and recreate the LocalQueue (its spec.clusterQueue is immutable).
const (
	teamNamespaceCreateTimeout = 5 * time.Minute
	teamNamespaceDeleteTimeout = 10 * time.Minute
	teamNamespacePollInterval  = 500 * time.Millisecond
)

// teamNamespaceTeamRule explains the team rule in diagnostics.
var teamNamespaceTeamRule = fmt.Sprintf("must be 1-%d lower-case letters, digits and hyphens, starting and ending "+
	"with a letter or digit (the AWS TeamName pattern), e.g. \"ml-research\"; it names the namespace hyperpod-ns-<team>",
	quota.MaxTeamLength)

// Keys the provider sets itself, and system keys that are never taken over on import.
var (
	teamNamespaceReservedKeys = map[string]string{
		quota.LabelManagedBy:             "the provider sets this label itself to mark the objects it created",
		quota.LabelQuotaAllocationID:     "the provider sets this label itself to the team, so that the team's ClusterQueue admits workloads from the namespace",
		quota.LabelSageMakerManagedQueue: "the provider sets this label itself to \"true\", like on the namespaces HyperPod task governance creates",
		corev1.LabelMetadataName:         "the Kubernetes API server sets this label itself to the namespace's name",
	}
	// teamNamespaceSystemPrefixes are annotation and label prefixes written by Kubernetes tools.
	teamNamespaceSystemPrefixes = []string{"kubectl.kubernetes.io/"}
)

// NewTeamNamespaceResource returns the hyperpod_team_namespace resource.
func NewTeamNamespaceResource() resource.Resource {
	return &teamNamespaceResource{}
}

type teamNamespaceResource struct {
	data *providerData
}

func (r *teamNamespaceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_team_namespace"
}

func (r *teamNamespaceResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	timeoutsBlock := timeouts.Block(ctx, timeouts.Opts{
		Create: true,
		Update: true,
		Delete: true,
		CreateDescription: fmt.Sprintf("How long creating the Namespace and LocalQueue may take, a Go duration such as "+
			"`\"2m\"` (default `%s`).", teamNamespaceDuration(teamNamespaceCreateTimeout)),
		UpdateDescription: fmt.Sprintf("How long an in-place update may take, including recreating a LocalQueue that "+
			"points at another ClusterQueue (default `%s`).", teamNamespaceDuration(teamNamespaceCreateTimeout)),
		DeleteDescription: fmt.Sprintf("How long deleting may take, including the wait until the LocalQueue and the "+
			"Namespace (with everything in it) are gone, a Go duration such as `\"20m\"` (default `%s`).",
			teamNamespaceDuration(teamNamespaceDeleteTimeout)),
	})
	if b, ok := timeoutsBlock.(schema.SingleNestedBlock); ok {
		b.Description = "Timeouts of create, update and delete."
		timeoutsBlock = b
	}

	computedName := func(text string) schema.StringAttribute {
		return schema.StringAttribute{Computed: true, Description: text}
	}
	resp.Schema = schema.Schema{
		Description: "A HyperPod team's namespace: the Namespace `hyperpod-ns-<team>`, labelled like the ones " +
			"SageMaker HyperPod task governance creates, and the Kueue LocalQueue `hyperpod-ns-<team>-localqueue` in it, " +
			"which feeds the team's ClusterQueue `hyperpod-ns-<team>-clusterqueue`. Pair it with a " +
			"`hyperpod_compute_quota` of the same `team`, which manages that ClusterQueue. Jobs reach the team's quota " +
			"by running in this namespace with the label `kueue.x-k8s.io/queue-name: hyperpod-ns-<team>-localqueue`.",
		Attributes: map[string]schema.Attribute{
			"id": computedName("Same as `team`; the import ID."),
			"team": schema.StringAttribute{
				Required: true,
				Description: fmt.Sprintf("Team name: 1-%d lower-case letters, digits and hyphens, starting and ending "+
					"with a letter or digit (the AWS TeamName rule). Use the same value as the `team` of the matching "+
					"`hyperpod_compute_quota`. Changing it replaces the namespace.", quota.MaxTeamLength),
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators: []validator.String{
					stringvalidator.LengthBetween(1, quota.MaxTeamLength),
					stringvalidator.RegexMatches(quota.TeamPattern, teamNamespaceTeamRule),
				},
			},
			"labels": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true,
				Description: "Labels added to the Namespace. Keys the provider sets itself (`app.kubernetes.io/managed-by`, " +
					"`sagemaker.amazonaws.com/quota-allocation-id`, `sagemaker.amazonaws.com/sagemaker-managed-queue`, " +
					"`kubernetes.io/metadata.name` and anything under `hyperpod.quotaworks.io/`) are rejected. A label " +
					"removed from this map is removed from the Namespace; labels other tools add are left alone.",
			},
			"annotations": schema.MapAttribute{
				ElementType: types.StringType,
				Optional:    true,
				Description: "Annotations added to the Namespace. The keys reserved for `labels` are rejected here too. " +
					"An annotation removed from this map is removed from the Namespace; annotations other tools add are " +
					"left alone.",
			},
			"force_destroy": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				Description: "Destroy the namespace even while it still holds Pods or Kueue Workloads, deleting them with " +
					"it. Default `false`: destroy fails and names how many are left. Set it to `true` and apply before " +
					"destroying.",
			},
			// The three names below are derived from team at plan time, so they are always known
			// in the plan. In state they record what the cluster holds (see teamNamespaceState):
			// a difference between the two is how drift of the objects shows in a plan.
			"namespace": computedName("Name of the team's Namespace, `hyperpod-ns-<team>`. Empty in state when the " +
				"Namespace has lost the labels this provider sets, so the next plan restores them."),
			"local_queue_name": computedName("Name of the team's Kueue LocalQueue, `hyperpod-ns-<team>-localqueue`; jobs " +
				"select it with the label `kueue.x-k8s.io/queue-name`. Empty in state when the LocalQueue is missing or " +
				"has lost its `app.kubernetes.io/managed-by` label, so the next plan recreates it."),
			"cluster_queue_name": computedName("Name of the ClusterQueue the LocalQueue feeds, " +
				"`hyperpod-ns-<team>-clusterqueue`, managed by the `hyperpod_compute_quota` of the same team. In state it " +
				"is the LocalQueue's `spec.clusterQueue` as read from the cluster (empty without a LocalQueue), so a " +
				"LocalQueue that points elsewhere shows in the next plan and is recreated."),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeoutsBlock,
		},
	}
}

func teamNamespaceDuration(d time.Duration) string {
	return strings.TrimSuffix(d.String(), "0s")
}

func (r *teamNamespaceResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

// ValidateConfig rejects label and annotation keys the provider owns and keys or values
// Kubernetes would refuse, before any API call.
func (r *teamNamespaceResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	for _, attr := range []string{"labels", "annotations"} {
		var m types.Map
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(attr), &m)...)
		if m.IsNull() || m.IsUnknown() {
			continue
		}
		total := 0
		elems := m.Elements()
		for _, key := range slices.Sorted(maps.Keys(elems)) { // a stable order of diagnostics
			v, p := elems[key], path.Root(attr).AtMapKey(key)
			if problem := teamNamespaceReservedKey(key); problem != "" {
				resp.Diagnostics.AddAttributeError(p, "Reserved "+strings.TrimSuffix(attr, "s")+" key",
					fmt.Sprintf("%q is reserved: %s. Remove it from %s; to tag the namespace, use a key of your own, "+
						"e.g. \"example.com/owner\".", key, problem, attr))
				continue
			}
			if errs := k8svalidation.IsQualifiedName(key); len(errs) > 0 {
				resp.Diagnostics.AddAttributeError(p, "Invalid "+strings.TrimSuffix(attr, "s")+" key",
					fmt.Sprintf("%q is not a valid Kubernetes %s key: %s. Use an optional DNS prefix and a name of at most "+
						"63 letters, digits, '-', '_' and '.', e.g. \"example.com/cost-center\".",
						key, strings.TrimSuffix(attr, "s"), strings.Join(errs, "; ")))
			}
			s, ok := v.(types.String)
			if !ok || s.IsNull() || s.IsUnknown() {
				continue
			}
			total += len(key) + len(s.ValueString())
			if attr == "labels" {
				if errs := k8svalidation.IsValidLabelValue(s.ValueString()); len(errs) > 0 {
					resp.Diagnostics.AddAttributeError(p, "Invalid label value",
						fmt.Sprintf("The value %q of label %q is not a valid Kubernetes label value: %s. Shorten it or "+
							"replace other characters with '-', or store it in annotations instead.",
							s.ValueString(), key, strings.Join(errs, "; ")))
				}
			}
		}
		if attr == "annotations" && total > teamNamespaceMaxAnnotationBytes {
			resp.Diagnostics.AddAttributeError(path.Root(attr), "Annotations too large",
				fmt.Sprintf("The annotations add up to %d bytes; Kubernetes accepts at most %d. Remove or shorten some.",
					total, teamNamespaceMaxAnnotationBytes))
		}
	}
}

// teamNamespaceMaxAnnotationBytes is Kubernetes' limit on the total size of an object's annotations.
const teamNamespaceMaxAnnotationBytes = 256 * 1024

// teamNamespaceReservedKey says why key is reserved, or returns "".
func teamNamespaceReservedKey(key string) string {
	if why, ok := teamNamespaceReservedKeys[key]; ok {
		return why
	}
	if strings.HasPrefix(key, quota.AnnotationPrefix) {
		return fmt.Sprintf("keys under %q are kept for the provider's own bookkeeping", quota.AnnotationPrefix)
	}
	return ""
}

// ModifyPlan derives id, namespace, local_queue_name and cluster_queue_name from team, so they
// are known at plan time (no API call) and differ from state when Read saw drift.
func (r *teamNamespaceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var team types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("team"), &team)...)
	if resp.Diagnostics.HasError() || team.IsUnknown() || team.IsNull() {
		return
	}
	t := team.ValueString()
	for attr, v := range map[string]string{
		"id":                 t,
		"namespace":          quota.NamespaceName(t),
		"local_queue_name":   quota.LocalQueueName(t),
		"cluster_queue_name": quota.ClusterQueueName(t),
	} {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(attr), types.StringValue(v))...)
	}
}

// teamNamespaceObjects are the team's objects as found in the cluster; nil when absent.
type teamNamespaceObjects struct {
	namespace  *corev1.Namespace
	localQueue *kueue.LocalQueue
}

// get reads the Namespace and, when it exists, the LocalQueue: one GET each, no list.
func (r *teamNamespaceResource) get(ctx context.Context, team string) (teamNamespaceObjects, diag.Diagnostics) {
	var diags diag.Diagnostics
	var objs teamNamespaceObjects
	nsName, lqName := quota.NamespaceName(team), quota.LocalQueueName(team)

	var ns corev1.Namespace
	found, err := r.data.kube.Get(ctx, kube.Namespaces, "", nsName, &ns)
	if err != nil {
		diags.AddError("Cannot read Namespace", fmt.Sprintf("Reading Namespace %q failed: %s. Check that the cluster is "+
			"reachable and that the provider's credentials may get namespaces.", nsName, err))
		return objs, diags
	}
	if !found {
		return objs, diags
	}
	objs.namespace = &ns

	var lq kueue.LocalQueue
	found, err = r.data.kube.Get(ctx, kueue.LocalQueues, nsName, lqName, &lq)
	if err != nil && !apierrors.IsNotFound(err) {
		diags.AddError("Cannot read LocalQueue", fmt.Sprintf("Reading %s LocalQueue %q in namespace %q failed: %s. Check "+
			"that Kueue (v0.17 or newer, or HyperPod task governance) is installed and that the provider's credentials "+
			"may get localqueues.kueue.x-k8s.io.", kueue.GroupVersion, lqName, nsName, err))
		return objs, diags
	}
	if found {
		objs.localQueue = &lq
	}
	return objs, diags
}

// teamNamespaceState fills the computed attributes and the label and annotation maps of m from
// what the cluster holds.
//
// Drift design: the plan always derives namespace, local_queue_name and cluster_queue_name from
// team (ModifyPlan). Read records in state what it observes instead, so any drift of the
// provider's own settings makes state and plan differ and the next plan is an in-place update
// that restores them:
//   - namespace is the Namespace's name only while it carries all of the provider's labels
//     with the right values, "" otherwise;
//   - local_queue_name is the LocalQueue's name only while it exists and carries the
//     managed-by label, "" otherwise;
//   - cluster_queue_name is the LocalQueue's spec.clusterQueue ("" without a LocalQueue), so
//     a LocalQueue pointing at another ClusterQueue shows as that name.
//
// For labels and annotations only the keys already in state are compared: their current values
// are recorded and keys that disappeared are dropped, so a changed or removed entry shows in the
// plan while keys other managers add are ignored. With importing set there is no prior state;
// the maps are then taken from the Namespace (see teamNamespaceImportedMetadata).
func teamNamespaceState(ctx context.Context, m *teamNamespaceModel, team string, objs teamNamespaceObjects, importing bool) diag.Diagnostics {
	var diags diag.Diagnostics
	ns, lq := objs.namespace, objs.localQueue

	m.ID = types.StringValue(team)
	m.Team = types.StringValue(team)
	m.Namespace = types.StringValue("")
	if teamNamespaceLabelsIntact(ns, team) {
		m.Namespace = types.StringValue(ns.Name)
	}
	m.LocalQueueName = types.StringValue("")
	m.ClusterQueueName = types.StringValue("")
	if lq != nil && lq.DeletionTimestamp == nil {
		if lq.Labels[quota.LabelManagedBy] == quota.ManagedByValue {
			m.LocalQueueName = types.StringValue(lq.Name)
		}
		m.ClusterQueueName = types.StringValue(lq.Spec.ClusterQueue)
	}

	if importing {
		labels, annotations := teamNamespaceImportedMetadata(ns)
		m.Labels, diags = teamNamespaceMapValue(ctx, labels)
		var d diag.Diagnostics
		m.Annotations, d = teamNamespaceMapValue(ctx, annotations)
		diags.Append(d...)
		m.ForceDestroy = types.BoolValue(false)
		return diags
	}
	var d diag.Diagnostics
	m.Labels, d = teamNamespaceObserved(ctx, m.Labels, ns.Labels)
	diags.Append(d...)
	m.Annotations, d = teamNamespaceObserved(ctx, m.Annotations, ns.Annotations)
	diags.Append(d...)
	return diags
}

// teamNamespaceLabelsIntact reports whether ns carries every label the provider sets on it.
func teamNamespaceLabelsIntact(ns *corev1.Namespace, team string) bool {
	for k, v := range teamNamespaceOwnLabels(team) {
		if ns.Labels[k] != v {
			return false
		}
	}
	return true
}

// teamNamespaceOwnLabels are the labels the provider sets on the team's Namespace (design 2).
func teamNamespaceOwnLabels(team string) map[string]string {
	return map[string]string{
		quota.LabelManagedBy:             quota.ManagedByValue,
		quota.LabelQuotaAllocationID:     team,
		quota.LabelSageMakerManagedQueue: "true",
	}
}

// teamNamespaceObserved keeps the keys of prior and takes their values from the cluster;
// keys that are gone from the cluster are dropped.
func teamNamespaceObserved(ctx context.Context, prior types.Map, cluster map[string]string) (types.Map, diag.Diagnostics) {
	if prior.IsNull() || prior.IsUnknown() {
		return prior, nil
	}
	out := map[string]string{}
	for k := range prior.Elements() {
		if v, ok := cluster[k]; ok {
			out[k] = v
		}
	}
	return types.MapValueFrom(ctx, types.StringType, out)
}

func teamNamespaceMapValue(ctx context.Context, m map[string]string) (types.Map, diag.Diagnostics) {
	if len(m) == 0 {
		return types.MapNull(types.StringType), nil
	}
	return types.MapValueFrom(ctx, types.StringType, m)
}

// teamNamespaceImportedMetadata chooses the labels and annotations an import puts in state.
//
// When the Namespace was written by this provider (its managedFields hold a server-side apply
// entry of our field manager) they are exactly the keys that manager owns, minus the provider's
// own labels: the state the configuration had when it was last applied, so import reproduces
// it and the next plan is empty. Otherwise (a Namespace created by someone else) they are all
// labels and annotations except the provider's own keys (which Create would set) and system
// keys (kubernetes.io/metadata.name, kubectl.kubernetes.io/*): the plan after import then
// shows what is on the Namespace, and the first apply takes ownership of the keys the
// configuration keeps.
func teamNamespaceImportedMetadata(ns *corev1.Namespace) (labels, annotations map[string]string) {
	keep := func(key string) bool {
		if teamNamespaceReservedKey(key) != "" {
			return false
		}
		return !slices.ContainsFunc(teamNamespaceSystemPrefixes, func(p string) bool { return strings.HasPrefix(key, p) })
	}
	ownedLabels, ownedAnnotations, written := teamNamespaceOwnedMetadata(ns.ManagedFields)
	pick := func(all map[string]string, owned map[string]bool) map[string]string {
		out := map[string]string{}
		for k, v := range all {
			if keep(k) && (!written || owned[k]) {
				out[k] = v
			}
		}
		return out
	}
	return pick(ns.Labels, ownedLabels), pick(ns.Annotations, ownedAnnotations)
}

// teamNamespaceOwnedMetadata returns the label and annotation keys that the provider's field
// manager owns, and whether that manager has written the object at all.
func teamNamespaceOwnedMetadata(entries []metav1.ManagedFieldsEntry) (labels, annotations map[string]bool, written bool) {
	labels, annotations = map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		if e.Manager != quota.FieldManager || e.Operation != metav1.ManagedFieldsOperationApply {
			continue
		}
		written = true
		if e.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Metadata struct {
				Labels      map[string]json.RawMessage `json:"f:labels"`
				Annotations map[string]json.RawMessage `json:"f:annotations"`
			} `json:"f:metadata"`
		}
		if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields); err != nil {
			continue
		}
		for k := range fields.Metadata.Labels {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				labels[key] = true
			}
		}
		for k := range fields.Metadata.Annotations {
			if key, ok := strings.CutPrefix(k, "f:"); ok {
				annotations[key] = true
			}
		}
	}
	return labels, annotations, written
}

func (r *teamNamespaceResource) configured(diags *diag.Diagnostics) bool {
	if r.data == nil {
		diags.AddError("Provider not configured", "The hyperpod provider was not configured before this resource was "+
			"used; this is a bug in the provider or in Terraform, please report it.")
		return false
	}
	return true
}

func (r *teamNamespaceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan teamNamespaceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, teamNamespaceCreateTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	team := plan.Team.ValueString()
	ctx = tflog.SetField(ctx, "team", team)
	objs, d := r.get(ctx, team)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Create never takes over an object it did not create (design 3.3).
	if ns := objs.namespace; ns != nil {
		if ns.DeletionTimestamp != nil {
			resp.Diagnostics.AddAttributeError(path.Root("team"), "Namespace is being deleted",
				fmt.Sprintf("Namespace %q already exists and is terminating. Wait until it is gone (kubectl get namespace %s), "+
					"then apply again.", ns.Name, ns.Name))
			return
		}
		if owner, ok := ns.Labels[quota.LabelManagedBy]; !ok || owner != quota.ManagedByValue {
			resp.Diagnostics.AddAttributeError(path.Root("team"), "Namespace already exists",
				teamNamespaceTakeoverDetail("Namespace", ns.Name, "", ns.Labels, team))
			return
		}
	}
	if lq := objs.localQueue; lq != nil {
		if owner, ok := lq.Labels[quota.LabelManagedBy]; !ok || owner != quota.ManagedByValue {
			resp.Diagnostics.AddAttributeError(path.Root("team"), "LocalQueue already exists",
				teamNamespaceTakeoverDetail("LocalQueue", lq.Name, lq.Namespace, lq.Labels, team))
			return
		}
	}

	tflog.Debug(ctx, "creating team namespace", map[string]any{"namespace": quota.NamespaceName(team), "adopting": objs.namespace != nil})
	resp.Diagnostics.Append(r.apply(ctx, &plan, objs)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// teamNamespaceTakeoverDetail explains why create refuses an existing object and how to import it.
func teamNamespaceTakeoverDetail(kind, name, namespace string, labels map[string]string, team string) string {
	what := fmt.Sprintf("%s %q", kind, name)
	if namespace != "" {
		what += fmt.Sprintf(" in namespace %q", namespace)
	}
	owner := "was not created by this provider (it has no " + quota.LabelManagedBy + " label)"
	if v, ok := labels[quota.LabelManagedBy]; ok {
		owner = fmt.Sprintf("is managed by %q (its %s label), not by this provider", v, quota.LabelManagedBy)
	}
	return fmt.Sprintf("%s already exists and %s. The provider never takes over objects it did not create. "+
		"To manage the team's namespace with Terraform, import it first:\n\n"+
		"  terraform import hyperpod_team_namespace.<name> %s\n\n"+
		"or add an import block to the configuration:\n\n"+
		"  import {\n    to = hyperpod_team_namespace.<name>\n    id = %q\n  }\n\n"+
		"then run terraform apply, which adds the provider's labels and the LocalQueue. Otherwise choose another team.",
		what, owner, team, team)
}

func (r *teamNamespaceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state teamNamespaceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	team := state.Team.ValueString()
	ctx = tflog.SetField(ctx, "team", team)
	objs, d := r.get(ctx, team)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if objs.namespace == nil || objs.namespace.DeletionTimestamp != nil {
		tflog.Info(ctx, "team namespace is gone or terminating; removing it from state so the next plan creates it",
			map[string]any{"namespace": quota.NamespaceName(team)})
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(teamNamespaceState(ctx, &state, team, objs, false)...)
	tflog.Debug(ctx, "read team namespace", map[string]any{
		"namespace_state": state.Namespace.ValueString(), "local_queue_state": state.LocalQueueName.ValueString(),
		"cluster_queue_state": state.ClusterQueueName.ValueString(),
	})
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *teamNamespaceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan teamNamespaceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, teamNamespaceCreateTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	team := plan.Team.ValueString()
	ctx = tflog.SetField(ctx, "team", team)
	objs, d := r.get(ctx, team)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Debug(ctx, "updating team namespace", map[string]any{"namespace": quota.NamespaceName(team)})
	resp.Diagnostics.Append(r.apply(ctx, &plan, objs)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// apply server-side applies the Namespace and the LocalQueue as planned. A LocalQueue that is
// terminating or points at another ClusterQueue (spec.clusterQueue is immutable) is deleted
// and recreated.
func (r *teamNamespaceResource) apply(ctx context.Context, plan *teamNamespaceModel, objs teamNamespaceObjects) diag.Diagnostics {
	var diags diag.Diagnostics
	team := plan.Team.ValueString()
	nsName, lqName, cqName := quota.NamespaceName(team), quota.LocalQueueName(team), quota.ClusterQueueName(team)

	labels := teamNamespaceOwnLabels(team)
	var user, annotations map[string]string
	if !plan.Labels.IsNull() {
		diags.Append(plan.Labels.ElementsAs(ctx, &user, false)...)
	}
	if !plan.Annotations.IsNull() {
		diags.Append(plan.Annotations.ElementsAs(ctx, &annotations, false)...)
	}
	if diags.HasError() {
		return diags
	}
	for k, v := range user {
		labels[k] = v // reserved keys were rejected by ValidateConfig
	}
	ns := metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: nsName, Labels: labels, Annotations: annotations},
	}
	if err := r.data.kube.Apply(ctx, kube.Namespaces, quota.FieldManager, &ns, nil); err != nil {
		diags.AddError("Cannot apply Namespace", fmt.Sprintf("Server-side apply of "+
			"Namespace %q failed: %s. Check the labels and annotations and that the provider's credentials may patch "+
			"namespaces.", nsName, err))
		return diags
	}

	if lq := objs.localQueue; lq != nil && (lq.DeletionTimestamp != nil || lq.Spec.ClusterQueue != cqName) {
		tflog.Info(ctx, "recreating LocalQueue: spec.clusterQueue is immutable", map[string]any{
			"local_queue": lqName, "cluster_queue_found": lq.Spec.ClusterQueue, "cluster_queue_wanted": cqName,
		})
		if err := r.data.kube.DeleteAndWait(ctx, kueue.LocalQueues, nsName, lqName, teamNamespacePollInterval); err != nil {
			diags.AddAttributeError(path.Root("cluster_queue_name"), "Cannot recreate LocalQueue",
				fmt.Sprintf("LocalQueue %q in namespace %q points at ClusterQueue %q, not %q, and spec.clusterQueue cannot "+
					"be changed, so it has to be deleted and recreated; deleting it failed: %s. Delete it yourself "+
					"(kubectl delete localqueue -n %s %s) and apply again, or raise timeouts.create.",
					lqName, nsName, lq.Spec.ClusterQueue, cqName, err, nsName, lqName))
			return diags
		}
	}
	lq := kueue.LocalQueue{
		TypeMeta: metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kueue.KindLocalQueue},
		ObjectMeta: metav1.ObjectMeta{Name: lqName, Namespace: nsName,
			Labels: map[string]string{quota.LabelManagedBy: quota.ManagedByValue}},
		Spec: kueue.LocalQueueSpec{ClusterQueue: cqName},
	}
	if err := r.data.kube.Apply(ctx, kueue.LocalQueues, quota.FieldManager, &lq, nil); err != nil {
		detail := fmt.Sprintf("Server-side apply of %s LocalQueue %q in namespace %q failed: %s.", kueue.GroupVersion, lqName, nsName, err)
		if apierrors.IsNotFound(err) {
			detail += " The cluster does not serve LocalQueues: install Kueue v0.17 or newer (or HyperPod task governance) first."
		} else {
			detail += " Check that the provider's credentials may patch localqueues.kueue.x-k8s.io."
		}
		diags.AddError("Cannot apply LocalQueue", detail)
	}
	return diags
}

func (r *teamNamespaceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state teamNamespaceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || !r.configured(&resp.Diagnostics) {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, teamNamespaceDeleteTimeout)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	team := state.Team.ValueString()
	ctx = tflog.SetField(ctx, "team", team)
	nsName, lqName := quota.NamespaceName(team), quota.LocalQueueName(team)

	if !state.ForceDestroy.ValueBool() {
		pods, workloads, err := r.countWork(ctx, nsName)
		if err != nil {
			resp.Diagnostics.AddError("Cannot check the namespace before deleting it", err.Error())
			return
		}
		if pods > 0 || workloads > 0 {
			resp.Diagnostics.AddAttributeError(path.Root("force_destroy"), "Namespace is not empty",
				fmt.Sprintf("namespace %q still holds %s and %s; delete them, or set force_destroy = true and apply "+
					"before destroying", nsName, teamNamespacePlural(pods, "Pod"), teamNamespacePlural(workloads, "Kueue Workload")))
			return
		}
	}

	tflog.Debug(ctx, "deleting team namespace", map[string]any{"namespace": nsName, "force_destroy": state.ForceDestroy.ValueBool()})
	for _, o := range []struct {
		gvr             k8sschema.GroupVersionResource
		namespace, name string
		kind            string
	}{
		{kueue.LocalQueues, nsName, lqName, "LocalQueue"},
		{kube.Namespaces, "", nsName, "Namespace"},
	} {
		if err := r.data.kube.DeleteAndWait(ctx, o.gvr, o.namespace, o.name, teamNamespacePollInterval); err != nil {
			detail := fmt.Sprintf("Deleting %s %q failed: %s.", o.kind, o.name, err)
			if errors.Is(err, kube.ErrStillExists) {
				detail = fmt.Sprintf("%s %q was not gone within the delete timeout (%s): %s. A namespace is removed only "+
					"after everything in it is deleted; check what is left (kubectl get all -n %s) and its finalizers, "+
					"then destroy again, or raise timeouts.delete.", o.kind, o.name, timeout, err, nsName)
			}
			resp.Diagnostics.AddError("Cannot delete "+o.kind, detail)
			return
		}
	}
}

// countWork counts the Pods that have not finished and the Kueue Workloads in namespace: one
// LIST each. Completed Pods (Succeeded, Failed) are not work in progress and do not block a
// destroy. A cluster without the Workload CRD has no Workloads.
func (r *teamNamespaceResource) countWork(ctx context.Context, namespace string) (pods, workloads int, err error) {
	cs, err := r.data.kube.Clientset(ctx)
	if err != nil {
		return 0, 0, err
	}
	podList, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "status.phase!=Succeeded,status.phase!=Failed",
	})
	if err != nil {
		return 0, 0, fmt.Errorf("listing Pods in namespace %q failed: %w. The provider's credentials need list "+
			"permission on pods, or set force_destroy = true to skip this check", namespace, err)
	}
	dc, err := r.data.kube.Dynamic(ctx)
	if err != nil {
		return 0, 0, err
	}
	wlList, err := dc.Resource(kueue.Workloads).Namespace(namespace).List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return len(podList.Items), 0, nil
	case err != nil:
		return 0, 0, fmt.Errorf("listing %s Workloads in namespace %q failed: %w. The provider's credentials need list "+
			"permission on workloads.kueue.x-k8s.io, or set force_destroy = true to skip this check", kueue.GroupVersion, namespace, err)
	}
	return len(podList.Items), len(wlList.Items), nil
}

func teamNamespacePlural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ImportState imports by team: it validates the team, reads the objects and builds the whole
// state (force_destroy false, no timeouts; labels and annotations per
// teamNamespaceImportedMetadata).
func (r *teamNamespaceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	team := req.ID
	if len(team) > quota.MaxTeamLength || !quota.TeamPattern.MatchString(team) {
		resp.Diagnostics.AddError("Invalid import ID", fmt.Sprintf("The import ID is the team, which %s; got %q. "+
			"Import with: terraform import hyperpod_team_namespace.<name> <team>.", teamNamespaceTeamRule, team))
		return
	}
	if !r.configured(&resp.Diagnostics) {
		return
	}
	ctx = tflog.SetField(ctx, "team", team)
	objs, d := r.get(ctx, team)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	if objs.namespace == nil || objs.namespace.DeletionTimestamp != nil {
		resp.Diagnostics.AddError("Cannot import team namespace", fmt.Sprintf("Namespace %q does not exist (or is being "+
			"deleted), so there is nothing to import for team %q. Check the team name, or remove the import and let "+
			"terraform apply create the namespace.", quota.NamespaceName(team), team))
		return
	}
	var m teamNamespaceModel
	resp.Diagnostics.Append(teamNamespaceState(ctx, &m, team, objs, true)...)
	if resp.Diagnostics.HasError() {
		return
	}
	tflog.Debug(ctx, "imported team namespace", map[string]any{"namespace": objs.namespace.Name})
	// Attribute by attribute, so that timeouts stays null.
	for name, v := range map[string]attr.Value{
		"id": m.ID, "team": m.Team, "labels": m.Labels, "annotations": m.Annotations, "force_destroy": m.ForceDestroy,
		"namespace": m.Namespace, "local_queue_name": m.LocalQueueName, "cluster_queue_name": m.ClusterQueueName,
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), v)...)
	}
}
