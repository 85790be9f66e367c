package provider

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
)

// providerConfig is the provider block turned into cluster settings and a catalog. Values known
// only after apply (a cluster name from another resource, say) are listed in pending instead of
// failing the conversion: planning new resources needs neither the cluster nor those values.
type providerConfig struct {
	settings kube.Settings
	catalog  *catalog.Catalog
	// pending holds the paths of unknown attributes, e.g. "exec.args[3]", "host".
	pending         []string
	pendingTypes    map[string]bool
	allTypesPending bool
}

// configReader reads attribute values that may be null or unknown at any depth, recording the
// path of every unknown one.
type configReader struct {
	pending []string
}

func (r *configReader) unknown(p string) { r.pending = append(r.pending, p) }

func (r *configReader) str(v attr.Value, p string) string {
	s, ok := v.(types.String)
	switch {
	case !ok || s.IsNull():
		return ""
	case s.IsUnknown():
		r.unknown(p)
		return ""
	}
	return s.ValueString()
}

func (r *configReader) boolPtr(v types.Bool, p string) *bool {
	if v.IsUnknown() {
		r.unknown(p)
		return nil
	}
	return v.ValueBoolPointer()
}

// strList returns nil for a null list and a non-nil slice for a known one, even when empty.
// Unknown elements are left out.
func (r *configReader) strList(v attr.Value, p string) []string {
	l, ok := v.(types.List)
	switch {
	case !ok || l.IsNull():
		return nil
	case l.IsUnknown():
		r.unknown(p)
		return nil
	}
	out := []string{}
	for i, e := range l.Elements() {
		s, ok := e.(types.String)
		if !ok || s.IsNull() {
			continue
		}
		if s.IsUnknown() {
			r.unknown(fmt.Sprintf("%s[%d]", p, i))
			continue
		}
		out = append(out, s.ValueString())
	}
	return out
}

func (r *configReader) strMap(v attr.Value, p string) map[string]string {
	m, ok := v.(types.Map)
	switch {
	case !ok || m.IsNull():
		return nil
	case m.IsUnknown():
		r.unknown(p)
		return nil
	}
	out := map[string]string{}
	for k, e := range m.Elements() {
		s, ok := e.(types.String)
		if !ok || s.IsNull() {
			continue
		}
		if s.IsUnknown() {
			r.unknown(fmt.Sprintf("%s[%q]", p, k))
			continue
		}
		out[k] = s.ValueString()
	}
	return out
}

// object returns the attributes of a nested block, or nil when it is null or unknown.
func (r *configReader) object(v types.Object, p string) map[string]attr.Value {
	if v.IsNull() {
		return nil
	}
	if v.IsUnknown() {
		r.unknown(p)
		return nil
	}
	return v.Attributes()
}

// readProviderConfig converts the provider block, applies the KUBE_* variables and reports
// every invalid setting it can check now, each at its attribute; settings that depend on a
// pending value are checked once it is known.
func readProviderConfig(m providerModel, lookupEnv func(string) (string, bool), diags *diag.Diagnostics) providerConfig {
	r := &configReader{}
	s := kube.Settings{
		ConfigPath:            r.str(m.ConfigPath, "config_path"),
		ConfigPaths:           r.strList(m.ConfigPaths, "config_paths"),
		ConfigContext:         r.str(m.ConfigContext, "config_context"),
		ConfigContextAuthInfo: r.str(m.ConfigContextAuthInfo, "config_context_auth_info"),
		ConfigContextCluster:  r.str(m.ConfigContextCluster, "config_context_cluster"),
		Host:                  r.str(m.Host, "host"),
		Token:                 r.str(m.Token, "token"),
		ClusterCACertificate:  r.str(m.ClusterCACertificate, "cluster_ca_certificate"),
		ClientCertificate:     r.str(m.ClientCertificate, "client_certificate"),
		ClientKey:             r.str(m.ClientKey, "client_key"),
		TLSServerName:         r.str(m.TLSServerName, "tls_server_name"),
		ProxyURL:              r.str(m.ProxyURL, "proxy_url"),
		Insecure:              r.boolPtr(m.Insecure, "insecure"),
	}
	if m.QPS.IsUnknown() {
		r.unknown("qps")
	} else {
		s.QPS = m.QPS.ValueFloat64Pointer()
	}
	if m.Burst.IsUnknown() {
		r.unknown("burst")
	} else {
		s.Burst = m.Burst.ValueInt64Pointer()
	}
	if a := r.object(m.Exec, "exec"); a != nil {
		s.Exec = &kube.ExecSettings{
			APIVersion: r.str(a["api_version"], "exec.api_version"),
			Command:    r.str(a["command"], "exec.command"),
			Args:       r.strList(a["args"], "exec.args"),
			Env:        r.strMap(a["env"], "exec.env"),
		}
	}
	if a := r.object(m.Retry, "retry"); a != nil {
		s.Retry = readRetry(r, a, diags)
	}

	conf := providerConfig{}
	conf.catalog, conf.pendingTypes, conf.allTypesPending = readInstanceTypes(m.InstanceTypes, diags)
	if conf.allTypesPending {
		r.unknown("instance_types")
	}
	for t := range conf.pendingTypes {
		r.unknown(fmt.Sprintf("instance_types[%q]", t))
	}
	sort.Strings(r.pending)
	conf.pending = r.pending

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
	return conf
}

// readRetry converts the retry block; a negative or malformed value is an error at its path.
func readRetry(r *configReader, a map[string]attr.Value, diags *diag.Diagnostics) kube.RetrySettings {
	var out kube.RetrySettings
	if v, ok := a["max_attempts"].(types.Int64); ok {
		switch {
		case v.IsUnknown():
			r.unknown("retry.max_attempts")
		case v.IsNull():
		case v.ValueInt64() < 1 || v.ValueInt64() > 100:
			diags.AddAttributeError(path.Root("retry").AtName("max_attempts"), "Invalid provider configuration",
				fmt.Sprintf("retry.max_attempts is %d; set a number between 1 (no retries) and 100.", v.ValueInt64()))
		default:
			out.MaxAttempts = int(v.ValueInt64())
		}
	}
	duration := func(name string) time.Duration {
		raw := r.str(a[name], "retry."+name)
		if raw == "" {
			return 0
		}
		d, err := time.ParseDuration(raw)
		if err != nil || d <= 0 {
			diags.AddAttributeError(path.Root("retry").AtName(name), "Invalid provider configuration",
				fmt.Sprintf("retry.%s is %q, which is not a positive Go duration; write it like \"500ms\", \"2s\" or \"1m\".", name, raw))
			return 0
		}
		return d
	}
	out.MinBackoff = duration("min_backoff")
	out.MaxBackoff = duration("max_backoff")
	out.MaxElapsed = duration("max_elapsed")
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
		r := &configReader{}
		a := obj.Attributes()
		o := catalog.Override{
			Accelerators:        int64Attr(r, a["accelerators"]),
			AcceleratorResource: strAttr(r, a["accelerator_resource"]),
			VCPU:                float64Attr(r, a["vcpu"]),
			MemoryGiB:           float64Attr(r, a["memory_in_gib"]),
			EFA:                 int64Attr(r, a["efa"]),
			MIGProfiles:         r.strList(a["mig_profiles"], "mig_profiles"),
		}
		if len(r.pending) > 0 {
			pending[name] = true
			continue
		}
		overrides[name] = o
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

func strAttr(r *configReader, v attr.Value) *string {
	s, ok := v.(types.String)
	if !ok || s.IsNull() {
		return nil
	}
	if s.IsUnknown() {
		r.unknown("")
		return nil
	}
	return s.ValueStringPointer()
}

func int64Attr(r *configReader, v attr.Value) *int64 {
	n, ok := v.(types.Int64)
	if !ok || n.IsNull() {
		return nil
	}
	if n.IsUnknown() {
		r.unknown("")
		return nil
	}
	return n.ValueInt64Pointer()
}

func float64Attr(r *configReader, v attr.Value) *float64 {
	f, ok := v.(types.Float64)
	if !ok || f.IsNull() {
		return nil
	}
	if f.IsUnknown() {
		r.unknown("")
		return nil
	}
	return f.ValueFloat64Pointer()
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
