// Package provider implements the hyperpod Terraform provider: schema, planning and CRUD that
// call into the pure packages (catalog, quota) and the Kubernetes access layer (kube).
package provider

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend/kueuebackend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend/sagemakerbackend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// New returns a constructor for the provider, as providerserver.Serve expects.
func New(version string) func() provider.Provider {
	return func() provider.Provider {
		return &hyperpodProvider{version: version, lookupEnv: os.LookupEnv}
	}
}

type hyperpodProvider struct {
	version string
	// lookupEnv is injectable so tests can prove the KUBE_* fallbacks without touching the process environment.
	lookupEnv func(string) (string, bool)

	// resourceData is what the last Configure gave resources, and deferred whether it deferred
	// them, for fastServer.
	mu           sync.Mutex
	resourceData any
	deferred     bool
}

// lastConfigure is the ResourceData of the last Configure, as the framework hands it to
// resources, and whether that Configure deferred them.
func (p *hyperpodProvider) lastConfigure() (data any, deferred bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resourceData, p.deferred
}

// providerData is what resources and data sources receive from Configure.
type providerData struct {
	kube    *kube.Client
	catalog *catalog.Catalog
	// pendingConfig names the provider attributes whose values are known only after apply
	// (e.g. exec.args[3]); while there are any, the cluster cannot be reached.
	pendingConfig []string
	// pendingTypes are the instance types whose instance_types entry is not known yet;
	// allTypesPending means the whole instance_types attribute is unknown.
	pendingTypes    map[string]bool
	allTypesPending bool
	// backend is where resources and data sources read and write quotas, priority classes and
	// capacity inputs.
	backend backend.Backend
	// finished remembers what this process's creates claimed, for a Terraform that goes away.
	finished finishedCreates
	// defaultTags are task_governance.default_tags: tags every tagged resource carries.
	defaultTags defaultTags
	// preview predicts what a quota change does to jobs.
	preview *admissionPreview
}

// client returns the Kubernetes client, or adds an error naming the provider attributes that
// are not known yet, in which case it returns nil. what says what needed the cluster.
func (pd *providerData) client(what string, diags *diag.Diagnostics) *kube.Client {
	if len(pd.pendingConfig) == 0 {
		return pd.kube
	}
	storeDiag(backend.NotKnownYet(what, pd.pendingConfig)).addTo(diags)
	return nil
}

// configured reports whether the provider was configured before a resource used it; a nil
// providerData adds an error.
func (pd *providerData) configured(diags *diag.Diagnostics) bool {
	if pd == nil {
		diags.AddError("Provider not configured", "The hyperpod provider was not configured before this resource was "+
			"used; this is a bug in the provider or in Terraform, please report it.")
		return false
	}
	return true
}

// ready is configured and client together: the prologue of every write. what says what needed
// the cluster.
func (pd *providerData) ready(what string, diags *diag.Diagnostics) bool {
	return pd.configured(diags) && pd.client(what, diags) != nil
}

// capacityPending reports whether the per-instance capacity of an instance type is not known at
// plan time because its instance_types entry is not.
func (pd *providerData) capacityPending(instanceType string) bool {
	return pd.allTypesPending || pd.pendingTypes[instanceType]
}

func (p *hyperpodProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "hyperpod"
	resp.Version = p.version
}

func (p *hyperpodProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	str := func(text string, sensitive bool) schema.StringAttribute {
		return schema.StringAttribute{Optional: true, Sensitive: sensitive, Description: text}
	}
	strList := func(text string) schema.ListAttribute {
		return schema.ListAttribute{ElementType: types.StringType, Optional: true, Description: text}
	}
	var (
		m        providerModel
		override instanceTypeOverrideModel
		exec     execModel
		retry    retryModel
		tg       taskGovernanceModel
		role     assumeRoleModel
		defaults defaultTagsModel
	)
	// cluster_arn, assume_role.role_arn and exec.command are served Required (requiredInBlock).
	tgAttributes, tgBlocks := attributesAndBlocksOf(&tg, []fieldSchema[schema.Attribute]{
		{&tg.ClusterARN, schema.StringAttribute{Optional: true, Description: "ARN of the HyperPod cluster, " +
			"`arn:aws:sagemaker:<region>:<account>:cluster/<id>`."}},
		{&tg.Region, str("AWS region of the SageMaker API (default: the cluster ARN's region).", false)},
		{&tg.Endpoint, str("URL of the SageMaker API endpoint, e.g. a VPC interface endpoint (default: the region's public endpoint).", false)},
		{&tg.STSEndpoint, str("URL of the STS endpoint used by `assume_role`.", false)},
		{&tg.Profile, str("Profile of the shared AWS configuration (default: `AWS_PROFILE` or `default`).", false)},
		{&tg.SharedConfigFiles, strList("Shared config files (default `~/.aws/config`).")},
		{&tg.SharedCredentialsFiles, strList("Shared credentials files (default `~/.aws/credentials`).")},
		{&tg.AccessKey, str("Static access key; prefer the environment or a profile. Never logged.", true)},
		{&tg.SecretKey, str("Static secret key, with `access_key`. Never logged.", true)},
		{&tg.Token, str("Session token of temporary static credentials. Never logged.", true)},
	}, []fieldSchema[schema.Block]{
		{&tg.AssumeRole, schema.SingleNestedBlock{
			Description: "Assume an IAM role with the credentials of the chain, as the aws provider's `assume_role`.",
			Attributes: attributesOf(&role, []fieldSchema[schema.Attribute]{
				{&role.RoleARN, str("ARN of the role to assume.", false)},
				{&role.SessionName, str("Session name (default: one the SDK generates).", false)},
				{&role.ExternalID, str("External ID the role's trust policy requires.", false)},
				{&role.Duration, str("Session duration, a Go duration between 15m and 12h (default 15m; renewed as it expires).", false)},
				{&role.Policy, str("IAM policy JSON that further restricts the session.", false)},
				{&role.PolicyARNs, strList("ARNs of managed policies that further restrict the session.")},
				{&role.Tags, schema.MapAttribute{ElementType: types.StringType, Optional: true, Description: "Session tags."}},
				{&role.TransitiveTagKeys, strList("Session tags that pass to roles assumed from this one.")},
				{&role.SourceIdentity, str("Source identity of the session.", false)},
			}),
		}},
		{&tg.DefaultTags, schema.SingleNestedBlock{
			Description: "Tags every compute quota and cluster scheduler config of this provider carries, as the aws " +
				"provider's `default_tags`: a resource's own `tags` win for a key they both set, and `tags_all` shows the merge.",
			Attributes: attributesOf(&defaults, []fieldSchema[schema.Attribute]{
				{&defaults.Tags, schema.MapAttribute{ElementType: types.StringType, Optional: true,
					Description: "The default tags (AWS's rules: keys of 1-128 characters, values of at most 256, no `aws:` prefix)."}},
			}),
		}},
	})
	attributes, blocks := attributesAndBlocksOf(&m, []fieldSchema[schema.Attribute]{
		{&m.ConfigPath, str("Path to a kubeconfig file.", false)},
		{&m.ConfigPaths, strList("Kubeconfig files merged in order, like `KUBECONFIG`.")},
		{&m.ConfigContext, str("Kubeconfig context to use instead of the current one.", false)},
		{&m.ConfigContextAuthInfo, str("Kubeconfig user to use instead of the context's.", false)},
		{&m.ConfigContextCluster, str("Kubeconfig cluster to use instead of the context's.", false)},
		{&m.Host, str("URL of the Kubernetes API server, e.g. `https://ABC.gr7.us-west-2.eks.amazonaws.com`.", false)},
		{&m.Token, str("Bearer token for the API server. Never logged.", true)},
		{&m.ClusterCACertificate, str("PEM-encoded root certificate of the API server.", false)},
		{&m.ClientCertificate, str("PEM-encoded client certificate for TLS authentication.", false)},
		{&m.ClientKey, str("PEM-encoded client key for TLS authentication. Never logged.", true)},
		{&m.Insecure, schema.BoolAttribute{
			Optional:    true,
			Description: "Skip verification of the API server's certificate. For test clusters only.",
		}},
		{&m.TLSServerName, str("Server name used to verify the API server's certificate.", false)},
		{&m.ProxyURL, str("URL of a proxy for all API requests.", false)},
		{&m.QPS, schema.Float64Attribute{
			Optional: true,
			Description: "Client-side rate limit in queries per second. Unset (the default) means no client-side limit: " +
				"the API server's Priority and Fairness answers overload with `429` and `Retry-After`, which the retry layer honours, " +
				"and Terraform's `-parallelism` (10) bounds the requests in flight. Set it to be gentler with a busy API server.",
		}},
		{&m.Burst, schema.Int64Attribute{
			Optional:    true,
			Description: "Requests allowed at once above `qps`; only used together with `qps` (default: the larger of 10 and `qps`).",
		}},
		{&m.AdmissionPreview, schema.BoolAttribute{
			Optional: true,
			Description: "Preview, during plan, what creating, changing or destroying a compute quota, or changing the " +
				"priority classes, does to the jobs of its cohort: which pending jobs start, which running ones are preempted " +
				"(by whom, under which rule) or left over their team's nominal quota in the order Kueue would preempt them, and " +
				"what cannot be predicted. Each preview is a warning of the plan, for at most 20 changes per plan. A plan that " +
				"changes quotas reads the cluster's Kueue objects and Workloads once (a LIST per kind, every request sent once); " +
				"its previews take at most 10 s in all. A plan that changes none reads nothing more. Default: " +
				"`HYPERPOD_ADMISSION_PREVIEW` when set (`true` or `false`), else `true`; `false` turns previews off.",
		}},
		{&m.InstanceTypes, schema.MapNestedAttribute{
			Optional: true,
			Description: "Per-instance capacity of instance types, keyed by name (`ml.<family>.<size>`). An entry for a " +
				"type of the built-in catalog overrides only the fields it sets; an entry for a new type must set " +
				"`vcpu` and `memory_in_gib`. Used for plan-time defaults and by `hyperpod_instance_type_capacity`.",
			NestedObject: schema.NestedAttributeObject{Attributes: attributesOf(&override, []fieldSchema[schema.Attribute]{
				{&override.Accelerators, schema.Int64Attribute{Optional: true, Description: "Accelerator devices per instance."}},
				{&override.AcceleratorResource, schema.StringAttribute{Optional: true, Description: "Extended resource name of the accelerators, e.g. `nvidia.com/gpu` (the default when `accelerators` > 0) or `aws.amazon.com/neuron`."}},
				{&override.VCPU, schema.Float64Attribute{Optional: true, Description: "vCPUs per instance."}},
				{&override.MemoryInGiB, schema.Float64Attribute{Optional: true, Description: "Memory per instance in GiB."}},
				{&override.EFA, schema.Int64Attribute{Optional: true, Description: "EFA interfaces per instance."}},
				{&override.MIGProfiles, strList("MIG profiles the GPUs can be partitioned into, e.g. `mig-1g.10gb`.")},
			})},
		}},
	}, []fieldSchema[schema.Block]{
		{&m.Exec, schema.SingleNestedBlock{
			Description: "Get credentials from a command, e.g. `aws eks get-token`.",
			Attributes: attributesOf(&exec, []fieldSchema[schema.Attribute]{
				{&exec.APIVersion, schema.StringAttribute{Optional: true, Description: "API version of the credential plugin, e.g. `client.authentication.k8s.io/v1beta1`."}},
				{&exec.Command, schema.StringAttribute{Optional: true, Description: "Command to run."}},
				{&exec.Args, strList("Arguments of the command.")},
				{&exec.Env, schema.MapAttribute{ElementType: types.StringType, Optional: true, Description: "Environment variables for the command."}},
			}),
		}},
		{&m.Retry, schema.SingleNestedBlock{
			Description: "Retries of idempotent API requests after connection errors, 429 and 5xx responses (`Retry-After` is honoured). " +
				"A request is retried until `max_attempts` or `max_elapsed` is spent, whichever comes first, so a flaky API server is absorbed " +
				"and a real outage fails in bounded time. Creates (POST) are not resent blindly: after a lost response the provider reads the object back.",
			Attributes: attributesOf(&retry, []fieldSchema[schema.Attribute]{
				{&retry.MaxElapsed, schema.StringAttribute{Optional: true, Description: fmt.Sprintf("Longest time one request is retried, from its first attempt, a Go duration (default `%s`).", kube.DefaultRetry.MaxElapsed)}},
				{&retry.MaxAttempts, schema.Int64Attribute{Optional: true, Description: fmt.Sprintf("Attempts per request, including the first (default %d).", kube.DefaultRetry.MaxAttempts)}},
				{&retry.MinBackoff, schema.StringAttribute{Optional: true, Description: fmt.Sprintf("Shortest wait between attempts, a Go duration (default `%s`).", kube.DefaultRetry.MinBackoff)}},
				{&retry.MaxBackoff, schema.StringAttribute{Optional: true, Description: fmt.Sprintf("Longest wait between attempts, a Go duration (default `%s`).", kube.DefaultRetry.MaxBackoff)}},
			}),
		}},
		{&m.TaskGovernance, schema.SingleNestedBlock{
			Description: "Manage quotas through the SageMaker API, for a HyperPod cluster that runs AWS's task-governance add-on " +
				"(which owns Kueue there). Compute quotas and the cluster scheduler config are then written with " +
				"`CreateComputeQuota` and `CreateClusterSchedulerConfig`; the Kubernetes settings above, when given, are used to " +
				"read Nodes and Kueue's status and to manage team namespaces. Credentials come from the standard AWS chain, as the " +
				"aws provider takes them: the `AWS_*` environment, shared config and credentials files with their profile, SSO, " +
				"web identity and pod identity, then `assume_role` on top. The `retry` block also bounds SageMaker retries " +
				"(throttling and 5xx).",
			Attributes: tgAttributes,
			Blocks:     tgBlocks,
		}},
	})
	resp.Schema = schema.Schema{
		Description: "Manages SageMaker HyperPod task-governance compute quotas. With a `task_governance` block, through " +
			"the SageMaker API on a HyperPod cluster that runs AWS's task-governance add-on; otherwise as Kueue objects on a " +
			"cluster that runs its own Kueue (v0.15 or newer): an EKS HyperPod cluster without the add-on, kind, or a local " +
			"control plane. The same resources serve both. Cluster access is configured like the kubernetes and helm " +
			"providers; nothing connects until a resource or data source needs it, so new quotas can be planned offline.",
		Attributes: withEnvDescriptions(attributes),
		Blocks:     blocks,
	}
}

// withEnvDescriptions appends to the description of each attribute that falls back to a KUBE_*
// variable the name of that variable.
func withEnvDescriptions(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	for _, ev := range kube.EnvVars {
		also := fmt.Sprintf(" Can also be set with the `%s` environment variable.", ev.Variable)
		a, ok := withDescriptionSuffix(attrs[ev.Attribute], also)
		if !ok {
			panic(fmt.Sprintf("provider attribute %q of %s: no such attribute, or one without a Description field", ev.Attribute, ev.Variable))
		}
		attrs[ev.Attribute] = a
	}
	return attrs
}

// withDescriptionSuffix returns a copy of a with suffix appended to its Description; ok is false
// when a is nil or has no such field. Every attribute kind has that exported field, but no
// method sets it, so it is set by name, whatever the kind.
func withDescriptionSuffix(a schema.Attribute, suffix string) (_ schema.Attribute, ok bool) {
	if a == nil {
		return nil, false
	}
	v := reflect.New(reflect.TypeOf(a)).Elem()
	v.Set(reflect.ValueOf(a))
	if v.Kind() != reflect.Struct {
		return nil, false
	}
	d := v.FieldByName("Description")
	if !d.IsValid() || d.Kind() != reflect.String {
		return nil, false
	}
	d.SetString(d.String() + suffix)
	return v.Interface().(schema.Attribute), true
}

func (p *hyperpodProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	defer func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.resourceData, p.deferred = resp.ResourceData, resp.Deferred != nil
	}()
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	conf := readProviderConfig(cfg, p.lookupEnv, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if len(conf.pending) > 0 && req.ClientCapabilities.DeferralAllowed {
		// Terraform can plan the dependent resources in a later round instead of failing.
		resp.Deferred = &provider.Deferred{Reason: provider.DeferredReasonProviderConfigUnknown}
	}

	// No connection here: the client is built on first use so plans of new resources work offline.
	tflog.Debug(ctx, "configured hyperpod provider", map[string]any{
		"host_set": conf.settings.Host != "", "config_path": conf.settings.ConfigPath, "context": conf.settings.ConfigContext,
		"pending_attributes": conf.pending,
	})
	data := &providerData{
		kube:            kube.NewClient(conf.settings, kube.WithListPriming(quota.LabelManagedBy+"="+quota.ManagedByValue)),
		catalog:         conf.catalog,
		pendingConfig:   conf.pending,
		pendingTypes:    conf.pendingTypes,
		allTypesPending: conf.allTypesPending,
		defaultTags:     conf.defaultTags,
	}
	data.backend = kueuebackend.New(data.kube, data.catalog)
	if tg := conf.taskGovernance; tg != nil {
		// While a value of the provider block is not known, nothing may reach the API (client
		// refuses first), but the plan must already follow the SageMaker path's traits.
		var client sagemakerclient.API
		if len(conf.pending) == 0 {
			c, err := sagemakerclient.New(ctx, *tg)
			if err != nil {
				resp.Diagnostics.AddAttributeError(path.Root(tagOf[providerModel]("TaskGovernance")), "Cannot configure the SageMaker client", err.Error())
				return
			}
			client = c
		}
		var kubernetes *kube.Client
		if kubernetesConfigured(conf.settings) {
			kubernetes = data.kube
		}
		data.backend = sagemakerbackend.New(client, tg.ClusterARN, data.catalog, sagemakerclient.DefaultPoll, kubernetes)
	}
	data.preview = &admissionPreview{off: conf.previewOff, state: data.backend.Kueue}
	if len(conf.pending) > 0 {
		data.preview.unavailable = "the provider's " + strings.Join(conf.pending, ", ") + " are not known until apply, so the cluster cannot be read yet"
	}
	resp.DataSourceData = data
	resp.ResourceData = data
}

// The provider's resources, data sources and functions, each with its type name, and what
// each implements beyond its base interface.

func (p *hyperpodProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return &computeQuotaResource{resourceBase{typeName: "_compute_quota"}} },
		func() resource.Resource { return &teamNamespaceResource{resourceBase{typeName: "_team_namespace"}} },
		func() resource.Resource {
			return &clusterSchedulerConfigResource{resourceBase{typeName: "_cluster_scheduler_config"}}
		},
	}
}

func (p *hyperpodProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		func() datasource.DataSource {
			return &instanceTypeCapacityDataSource{dataSourceBase[instanceTypeCapacityModel]{
				typeName: "_instance_type_capacity", read: readInstanceTypeCapacity,
			}}
		},
		func() datasource.DataSource {
			return &teamUsageDataSource{dataSourceBase[teamUsageModel]{typeName: "_team_usage", read: readTeamUsage}}
		},
	}
}

// Functions get no provider configuration (the framework calls them on an unconfigured
// provider), so they work from the built-in catalog only.
func (p *hyperpodProvider) Functions(_ context.Context) []func() function.Function {
	return []func() function.Function{
		func() function.Function {
			return &quotaDefaultsFunction{functionBase{name: "quota_defaults", definition: quotaDefaultsDefinition}}
		},
		func() function.Function {
			return &instanceTypeFunction{functionBase{name: "instance_type", definition: instanceTypeDefinition}}
		},
	}
}

var (
	_ provider.ProviderWithFunctions = (*hyperpodProvider)(nil)

	_ resource.ResourceWithConfigure      = (*computeQuotaResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*computeQuotaResource)(nil)
	_ resource.ResourceWithImportState    = (*computeQuotaResource)(nil)
	_ resource.ResourceWithIdentity       = (*computeQuotaResource)(nil)
	_ resource.ResourceWithConfigure      = (*teamNamespaceResource)(nil)
	_ resource.ResourceWithImportState    = (*teamNamespaceResource)(nil)
	_ resource.ResourceWithIdentity       = (*teamNamespaceResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*teamNamespaceResource)(nil)
	_ resource.ResourceWithValidateConfig = (*teamNamespaceResource)(nil)
	_ resource.ResourceWithConfigure      = (*clusterSchedulerConfigResource)(nil)
	_ resource.ResourceWithImportState    = (*clusterSchedulerConfigResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*clusterSchedulerConfigResource)(nil)
	_ resource.ResourceWithValidateConfig = (*clusterSchedulerConfigResource)(nil)
	_ resource.ResourceWithIdentity       = (*clusterSchedulerConfigResource)(nil)

	_ datasource.DataSourceWithConfigure = (*instanceTypeCapacityDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*teamUsageDataSource)(nil)
)

// typeName is a resource type's name after the provider's, e.g. "_compute_quota": the Metadata
// of the resource and of its list resource.
type typeName string

func (n typeName) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + string(n)
}

// resourceBase is what every resource shares: its type name (and Metadata), and the provider
// data it is configured with (nil until the provider is configured).
type resourceBase struct {
	typeName
	data *providerData
}

func (b *resourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

// functionBase is what every function shares: its name and its definition, both fixed
// (functions get no provider data).
type functionBase struct {
	name       string
	definition function.Definition
}

func (b *functionBase) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = b.name
}

func (b *functionBase) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = b.definition
}

// dataSourceBase is what every data source shares: resourceBase's type name and provider data,
// and its Read, which reads the configuration into model M, lets read fill in the rest and saves
// M as the state. Nothing is read when the configuration cannot be or the provider is not
// configured yet (data is nil), and nothing saved when read returns false.
type dataSourceBase[M any] struct {
	typeName string
	data     *providerData
	read     func(context.Context, *providerData, *M, *diag.Diagnostics) bool
}

func (b *dataSourceBase[M]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m M
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || b.data == nil || !b.read(ctx, b.data, &m, &resp.Diagnostics) {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (b *dataSourceBase[M]) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + b.typeName
}

func (b *dataSourceBase[M]) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	b.data = configuredData(req.ProviderData, &resp.Diagnostics)
}

// configuredData extracts the provider data handed to a resource or data source.
func configuredData(data any, diags *diag.Diagnostics) *providerData {
	if data == nil {
		return nil // the provider is not configured yet (validation and early plan phases)
	}
	pd, ok := data.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *providerData, got %T; this is a bug in the provider, please report it.", data))
		return nil
	}
	return pd
}
