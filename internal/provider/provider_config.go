package provider

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakerclient"
)

// providerConfig is the provider block turned into cluster settings and a catalog. Values known
// only after apply (a cluster name from another resource, say) are listed in pending instead of
// failing the conversion: planning new resources needs neither the cluster nor those values.
type providerConfig struct {
	settings kube.Settings
	// taskGovernance is the SageMaker path's settings, nil on the Kubernetes path.
	taskGovernance *sagemakerclient.Settings
	catalog        *catalog.Catalog
	// pending holds the paths of unknown attributes, e.g. "exec.args[3]", "host".
	pending         []string
	pendingTypes    map[string]bool
	allTypesPending bool
	defaultTags     defaultTags
	// previewOff says why the plan makes no admission preview; "" when it does.
	previewOff string
}

// readProviderConfig converts the provider block, applies the KUBE_* variables and reports
// every invalid setting it can check now, each at its attribute; settings that depend on a
// pending value are checked once it is known.
func readProviderConfig(m providerModel, lookupEnv func(string) (string, bool), diags *diag.Diagnostics) providerConfig {
	var pending []string
	inputs := m
	inputs.InstanceTypes = types.Map{}         // read below: a type with any unknown value is pending as a whole
	inputs.AdmissionPreview = types.BoolNull() // not a cluster setting: unknown only turns previews off
	// Default tags not known yet leave only tags_all unknown: the cluster can still be reached.
	defaultTagsPath := path.Root(tagOf[providerModel]("TaskGovernance")).AtName(tagOf[taskGovernanceModel]("DefaultTags")).String()
	modelUnknownPaths(inputs, path.Empty(), func(p path.Path) {
		if !strings.HasPrefix(p.String(), defaultTagsPath) {
			pending = append(pending, p.String())
		}
	})
	s := kube.Settings{
		ConfigPath:            m.ConfigPath.ValueString(),
		ConfigPaths:           knownStrings(m.ConfigPaths),
		ConfigContext:         m.ConfigContext.ValueString(),
		ConfigContextAuthInfo: m.ConfigContextAuthInfo.ValueString(),
		ConfigContextCluster:  m.ConfigContextCluster.ValueString(),
		Host:                  m.Host.ValueString(),
		Token:                 m.Token.ValueString(),
		ClusterCACertificate:  m.ClusterCACertificate.ValueString(),
		ClientCertificate:     m.ClientCertificate.ValueString(),
		ClientKey:             m.ClientKey.ValueString(),
		TLSServerName:         m.TLSServerName.ValueString(),
		ProxyURL:              m.ProxyURL.ValueString(),
		Insecure:              knownBool(m.Insecure),
		QPS:                   knownFloat64(m.QPS),
		Burst:                 knownInt64(m.Burst),
	}
	if e, ok := modelOf[execModel](m.Exec); ok {
		s.Exec = &kube.ExecSettings{
			APIVersion: e.APIVersion.ValueString(),
			Command:    e.Command.ValueString(),
			Args:       knownStrings(e.Args),
			Env:        knownStringMap(e.Env),
		}
	}
	if r, ok := modelOf[retryModel](m.Retry); ok {
		s.Retry = readRetry(r, diags)
	}

	conf := providerConfig{}
	conf.catalog, conf.pendingTypes, conf.allTypesPending = readInstanceTypes(m.InstanceTypes, diags)
	instanceTypes := path.Root(tagOf[providerModel]("InstanceTypes"))
	if conf.allTypesPending {
		pending = append(pending, instanceTypes.String())
	}
	for t := range conf.pendingTypes {
		pending = append(pending, instanceTypes.AtMapKey(t).String())
	}
	sort.Strings(pending)
	conf.pending = pending

	if err := s.ApplyEnv(lookupEnv); err != nil {
		diags.AddError("Invalid KUBE_* environment variable", err.Error()+" Fix or unset the variable.")
	}
	for _, p := range s.Problems() {
		if isPending(conf.pending, p.Attribute) {
			continue
		}
		diags.AddAttributeError(attributePath(p.Attribute), "Invalid provider configuration",
			// Terraform does not print attribute paths of provider blocks: the message names it.
			p.Message+".")
	}
	conf.settings = s
	conf.previewOff = readAdmissionPreview(m.AdmissionPreview, lookupEnv, diags)
	conf.taskGovernance = readTaskGovernance(m.TaskGovernance, s.Retry, conf.pending, diags)
	if tg, ok := modelOf[taskGovernanceModel](m.TaskGovernance); ok {
		conf.defaultTags = readDefaultTags(tg, diags)
	}
	return conf
}

// readTaskGovernance converts the task_governance block; nil when it is absent.
func readTaskGovernance(v types.Object, retry kube.RetrySettings, pending []string, diags *diag.Diagnostics) *sagemakerclient.Settings {
	tg, ok := modelOf[taskGovernanceModel](v)
	if !ok {
		return nil
	}
	s := &sagemakerclient.Settings{
		ClusterARN: tg.ClusterARN.ValueString(), Region: tg.Region.ValueString(),
		Endpoint: tg.Endpoint.ValueString(), STSEndpoint: tg.STSEndpoint.ValueString(), Profile: tg.Profile.ValueString(),
		SharedConfigFiles: knownStrings(tg.SharedConfigFiles), SharedCredentialsFiles: knownStrings(tg.SharedCredentialsFiles),
		AccessKey: tg.AccessKey.ValueString(), SecretKey: tg.SecretKey.ValueString(), Token: tg.Token.ValueString(),
		Retry: retrypolicy.Settings(retry),
	}
	block := tagOf[providerModel]("TaskGovernance")
	if r, ok := modelOf[assumeRoleModel](tg.AssumeRole); ok {
		s.AssumeRole = &sagemakerclient.AssumeRoleSettings{
			RoleARN: r.RoleARN.ValueString(), SessionName: r.SessionName.ValueString(), ExternalID: r.ExternalID.ValueString(),
			Policy: r.Policy.ValueString(), PolicyARNs: knownStrings(r.PolicyARNs), Tags: knownStringMap(r.Tags),
			TransitiveTagKeys: knownStrings(r.TransitiveTagKeys), SourceIdentity: r.SourceIdentity.ValueString(),
		}
		if raw := r.Duration.ValueString(); raw != "" {
			d, err := time.ParseDuration(raw)
			if err != nil {
				attr := block + "." + tagOf[taskGovernanceModel]("AssumeRole") + "." + tagOf[assumeRoleModel]("Duration")
				diags.AddAttributeError(attributePath(attr), "Invalid provider configuration",
					fmt.Sprintf("%s is %q, which is not a Go duration; write it like \"1h\" or \"30m\".", attr, raw))
			}
			s.AssumeRole.Duration = d
		}
	}
	for _, p := range s.Problems() {
		attr := block + "." + p.Attribute
		if isPending(pending, attr) {
			continue
		}
		diags.AddAttributeError(attributePath(attr), "Invalid provider configuration", fmt.Sprintf("%s: %s.", block, p.Message))
	}
	return s
}

// kubernetesConfigured reports whether the provider block or the KUBE_* variables name a
// cluster: on the SageMaker path the Kubernetes connection is optional.
func kubernetesConfigured(s kube.Settings) bool {
	return s.ConfigPath != "" || len(s.ConfigPaths) > 0 || s.Host != "" || s.Exec != nil || s.ConfigContext != ""
}

// readRetry converts the retry block; a negative or malformed value is an error at its path.
func readRetry(m retryModel, diags *diag.Diagnostics) kube.RetrySettings {
	var out kube.RetrySettings
	at := path.Root(tagOf[providerModel]("Retry"))
	if n := knownInt64(m.MaxAttempts); n != nil {
		name := tagOf[retryModel]("MaxAttempts")
		if *n < 1 || *n > 100 {
			diags.AddAttributeError(at.AtName(name), "Invalid provider configuration",
				fmt.Sprintf("%s.%s is %d; set a number between 1 (no retries) and 100.", at, name, *n))
		} else {
			out.MaxAttempts = int(*n)
		}
	}
	duration := func(field string, v types.String) time.Duration {
		raw := v.ValueString()
		if raw == "" {
			return 0
		}
		name := tagOf[retryModel](field)
		d, err := time.ParseDuration(raw)
		if err != nil || d <= 0 {
			diags.AddAttributeError(at.AtName(name), "Invalid provider configuration",
				fmt.Sprintf("%s.%s is %q, which is not a positive Go duration; write it like \"500ms\", \"2s\" or \"1m\".", at, name, raw))
			return 0
		}
		return d
	}
	out.MinBackoff = duration("MinBackoff", m.MinBackoff)
	out.MaxBackoff = duration("MaxBackoff", m.MaxBackoff)
	out.MaxElapsed = duration("MaxElapsed", m.MaxElapsed)
	return out
}

// readInstanceTypes merges the known entries of instance_types into the built-in catalog. An
// entry with any unknown value is pending: quotas of that type plan their computed amounts as
// unknown. An unknown map makes every type pending.
func readInstanceTypes(v types.Map, diags *diag.Diagnostics) (*catalog.Catalog, map[string]bool, bool) {
	if v.IsNull() {
		return catalog.Builtin(), nil, false
	}
	if v.IsUnknown() {
		return catalog.Builtin(), nil, true
	}
	pending := map[string]bool{}
	overrides := map[string]catalog.Override{}
	for name, e := range v.Elements() {
		obj, ok := e.(types.Object)
		if !ok || obj.IsNull() {
			continue
		}
		if obj.IsUnknown() {
			pending[name] = true
			continue
		}
		known := true
		unknownPaths(obj, path.Empty(), func(path.Path) { known = false })
		o, _ := modelOf[instanceTypeOverrideModel](obj)
		if !known {
			pending[name] = true
			continue
		}
		overrides[name] = catalog.Override{
			Accelerators:        knownInt64(o.Accelerators),
			AcceleratorResource: knownString(o.AcceleratorResource),
			VCPU:                knownFloat64(o.VCPU),
			MemoryGiB:           knownFloat64(o.MemoryInGiB),
			EFA:                 knownInt64(o.EFA),
			MIGProfiles:         knownStrings(o.MIGProfiles),
		}
	}
	cat, errs := catalog.New(overrides)
	for _, e := range errs {
		p := path.Root("instance_types").AtMapKey(e.InstanceType)
		if e.Field != "" {
			p = p.AtName(e.Field)
		}
		// Error() names the entry and field: Terraform does not print attribute paths of provider blocks.
		diags.AddAttributeError(p, "Invalid instance type override", e.Error()+". Fix or remove this entry of instance_types.")
	}
	return cat, pending, false
}

// isPending reports whether attribute (a path like "exec.command") or a block containing it is
// among the pending paths.
func isPending(pending []string, attribute string) bool {
	for _, p := range pending {
		if p == attribute || strings.HasPrefix(attribute, p+".") || strings.HasPrefix(p, attribute+"[") {
			return true
		}
	}
	return false
}

// attributePath turns "exec.command" or "retry.min_backoff" into a path.
func attributePath(attribute string) path.Path {
	steps := strings.Split(attribute, ".")
	p := path.Root(steps[0])
	for _, s := range steps[1:] {
		if i, err := strconv.Atoi(s); err == nil {
			p = p.AtListIndex(i)
		} else {
			p = p.AtName(s)
		}
	}
	return p
}

// admissionPreviewEnv turns admission previews on or off where the provider block does not say.
const admissionPreviewEnv = "HYPERPOD_ADMISSION_PREVIEW"

// readAdmissionPreview says why the plan makes no admission preview ("" when it does): the
// provider setting, else HYPERPOD_ADMISSION_PREVIEW, else on.
func readAdmissionPreview(v types.Bool, lookupEnv func(string) (string, bool), diags *diag.Diagnostics) string {
	switch {
	case v.IsUnknown():
		return "admission_preview is not known until apply"
	case !v.IsNull() && !v.ValueBool():
		return "admission_preview = false"
	case !v.IsNull():
		return ""
	}
	env, ok := lookupEnv(admissionPreviewEnv)
	if !ok || env == "" {
		return ""
	}
	on, err := strconv.ParseBool(env)
	if err != nil {
		diags.AddAttributeError(path.Root(tagOf[providerModel]("AdmissionPreview")), "Invalid "+admissionPreviewEnv,
			fmt.Sprintf("%s is %q, which is neither true nor false. Set it to true or false, or unset it (previews are "+
				"then on); admission_preview in the provider block takes precedence over it.", admissionPreviewEnv, env))
		return ""
	}
	if !on {
		return admissionPreviewEnv + "=false"
	}
	return ""
}
