// Package kube turns the provider block into a client-go configuration and
// builds the Kubernetes clients the provider uses: a retrying transport layer
// (go-retryablehttp under client-go) and lazily built typed and dynamic clients.
//
// The package has no Terraform framework imports; it logs through
// terraform-plugin-log using the context of each request.
package kube

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/retrypolicy"
)

// Settings is the cluster access part of the provider block, in the shape of
// the kubernetes and helm providers. Certificates and keys are PEM data, not
// file paths.
type Settings struct {
	// ConfigPath and ConfigPaths name kubeconfig files. When both are set,
	// ConfigPath comes first in the merge order.
	ConfigPath  string
	ConfigPaths []string

	// Context selection inside the kubeconfig. They only apply when a
	// kubeconfig is loaded.
	ConfigContext         string
	ConfigContextAuthInfo string
	ConfigContextCluster  string

	// Direct connection settings. They override whatever the kubeconfig says.
	Host                 string
	Token                string
	ClusterCACertificate string // PEM data
	ClientCertificate    string // PEM data
	ClientKey            string // PEM data
	Insecure             *bool
	TLSServerName        string
	ProxyURL             string

	// Exec configures a client-go credential plugin such as `aws eks get-token`.
	Exec *ExecSettings

	// QPS and Burst turn on a client-side rate limiter. With QPS nil there is
	// none: the API server's Priority and Fairness pushes back with 429 and
	// Retry-After, which the retry layer honours, and Terraform's parallelism
	// bounds how many requests are in flight. Burst only applies with QPS.
	QPS   *float64
	Burst *int64

	// Retry tunes the retrying transport (see WrapRetries).
	Retry RetrySettings

	// UserAgent is sent with every request; empty means DefaultUserAgent.
	UserAgent string
}

// ExecSettings is the provider's `exec` block.
type ExecSettings struct {
	APIVersion string
	Command    string
	Args       []string
	Env        map[string]string
}

// RetrySettings is the provider's `retry` block (see retrypolicy.Settings,
// which the SageMaker client shares). Zero values mean the corresponding
// DefaultRetry value.
type RetrySettings retrypolicy.Settings

// DefaultRetry holds the values used for zero fields of RetrySettings.
var DefaultRetry = RetrySettings(retrypolicy.Default)

// WithDefaults returns r with zero (or negative) fields replaced by
// DefaultRetry and MaxBackoff raised to MinBackoff when it is smaller.
func (r RetrySettings) WithDefaults() RetrySettings {
	return RetrySettings(retrypolicy.Settings(r).WithDefaults())
}

// Validate reports negative values and a MinBackoff above an explicitly set
// MaxBackoff.
func (r RetrySettings) Validate() error {
	return joinProblems(r.problems())
}

func (r RetrySettings) problems() []Problem {
	var out []Problem
	if r.MaxAttempts < 0 {
		out = append(out, Problem{"retry.max_attempts", fmt.Sprintf("retry.max_attempts must not be negative, got %d", r.MaxAttempts)})
	}
	if r.MinBackoff < 0 {
		out = append(out, Problem{"retry.min_backoff", fmt.Sprintf("retry.min_backoff must not be negative, got %s", r.MinBackoff)})
	}
	if r.MaxBackoff < 0 {
		out = append(out, Problem{"retry.max_backoff", fmt.Sprintf("retry.max_backoff must not be negative, got %s", r.MaxBackoff)})
	}
	if r.MaxElapsed < 0 {
		out = append(out, Problem{"retry.max_elapsed", fmt.Sprintf("retry.max_elapsed must not be negative, got %s", r.MaxElapsed)})
	}
	if r.MinBackoff > 0 && r.MaxBackoff > 0 && r.MinBackoff > r.MaxBackoff {
		out = append(out, Problem{"retry.min_backoff", fmt.Sprintf("retry.min_backoff (%s) must not be greater than retry.max_backoff (%s)", r.MinBackoff, r.MaxBackoff)})
	}
	return out
}

// DefaultUserAgent is the User-Agent sent when Settings.UserAgent is empty.
const DefaultUserAgent = "terraform-provider-hyperpod"

// EnvVar ties a provider attribute to the environment variable it falls back to.
type EnvVar struct {
	Attribute string
	Variable  string
}

// Environment variable names, as the kubernetes and helm providers use them.
const (
	EnvConfigPath      = "KUBE_CONFIG_PATH"
	EnvConfigPaths     = "KUBE_CONFIG_PATHS"
	EnvContext         = "KUBE_CTX"
	EnvContextAuthInfo = "KUBE_CTX_AUTH_INFO"
	EnvContextCluster  = "KUBE_CTX_CLUSTER"
	EnvHost            = "KUBE_HOST"
	EnvToken           = "KUBE_TOKEN"
	EnvClusterCACert   = "KUBE_CLUSTER_CA_CERT_DATA"
	EnvClientCert      = "KUBE_CLIENT_CERT_DATA"
	EnvClientKey       = "KUBE_CLIENT_KEY_DATA"
	EnvInsecure        = "KUBE_INSECURE"
	EnvTLSServerName   = "KUBE_TLS_SERVER_NAME"
	EnvProxyURL        = "KUBE_PROXY_URL"
	EnvQPS             = "KUBE_QPS"
	EnvBurst           = "KUBE_BURST"
)

// EnvVars lists, in schema order, every provider attribute that falls back to
// an environment variable, so the provider can name the variable in each
// attribute's description.
var EnvVars = []EnvVar{
	{Attribute: "config_path", Variable: EnvConfigPath},
	{Attribute: "config_paths", Variable: EnvConfigPaths},
	{Attribute: "config_context", Variable: EnvContext},
	{Attribute: "config_context_auth_info", Variable: EnvContextAuthInfo},
	{Attribute: "config_context_cluster", Variable: EnvContextCluster},
	{Attribute: "host", Variable: EnvHost},
	{Attribute: "token", Variable: EnvToken},
	{Attribute: "cluster_ca_certificate", Variable: EnvClusterCACert},
	{Attribute: "client_certificate", Variable: EnvClientCert},
	{Attribute: "client_key", Variable: EnvClientKey},
	{Attribute: "insecure", Variable: EnvInsecure},
	{Attribute: "tls_server_name", Variable: EnvTLSServerName},
	{Attribute: "proxy_url", Variable: EnvProxyURL},
	{Attribute: "qps", Variable: EnvQPS},
	{Attribute: "burst", Variable: EnvBurst},
}

// EnvVarFor returns the environment variable of a provider attribute, or ""
// when the attribute has none.
func EnvVarFor(attribute string) string {
	for _, e := range EnvVars {
		if e.Attribute == attribute {
			return e.Variable
		}
	}
	return ""
}

// ApplyEnv fills every unset field from its KUBE_* variable. A variable that
// is unset or empty leaves the field alone. lookup is usually os.LookupEnv
// (nil means os.LookupEnv).
//
// config_path and config_paths are one choice: the variables fill them only
// when neither is set, so a kubeconfig named in the configuration is never
// merged with one named in the environment. KUBE_CONFIG_PATHS is separated by
// filepath.ListSeparator (":" on Unix, ";" on Windows).
//
// It returns an error naming the variable when a value does not parse.
func (s *Settings) ApplyEnv(lookup func(string) (string, bool)) error {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	get := func(name string) (string, bool) {
		v, ok := lookup(name)
		if !ok || v == "" {
			return "", false
		}
		return v, true
	}
	setString := func(field *string, name string) {
		if *field != "" {
			return
		}
		if v, ok := get(name); ok {
			*field = v
		}
	}

	if s.ConfigPath == "" && len(s.ConfigPaths) == 0 {
		setString(&s.ConfigPath, EnvConfigPath)
		if v, ok := get(EnvConfigPaths); ok {
			for _, p := range filepath.SplitList(v) {
				if strings.TrimSpace(p) != "" {
					s.ConfigPaths = append(s.ConfigPaths, p)
				}
			}
		}
	}
	setString(&s.ConfigContext, EnvContext)
	setString(&s.ConfigContextAuthInfo, EnvContextAuthInfo)
	setString(&s.ConfigContextCluster, EnvContextCluster)
	setString(&s.Host, EnvHost)
	setString(&s.Token, EnvToken)
	setString(&s.ClusterCACertificate, EnvClusterCACert)
	setString(&s.ClientCertificate, EnvClientCert)
	setString(&s.ClientKey, EnvClientKey)
	setString(&s.TLSServerName, EnvTLSServerName)
	setString(&s.ProxyURL, EnvProxyURL)

	var errs []error
	if s.Insecure == nil {
		if v, ok := get(EnvInsecure); ok {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a boolean (use true or false)", EnvInsecure, v))
			} else {
				s.Insecure = &b
			}
		}
	}
	if s.QPS == nil {
		if v, ok := get(EnvQPS); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				errs = append(errs, fmt.Errorf("%s: %q is not a number", EnvQPS, v))
			} else {
				s.QPS = &f
			}
		}
	}
	if s.Burst == nil {
		if v, ok := get(EnvBurst); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not an integer", EnvBurst, v))
			} else {
				s.Burst = &n
			}
		}
	}
	return errors.Join(errs...)
}

// errNoCluster is returned by RESTConfig when neither a kubeconfig nor a host
// is configured.
var errNoCluster = errors.New("no Kubernetes cluster configured: set config_path or config_paths " +
	"(" + EnvConfigPath + " / " + EnvConfigPaths + ") to a kubeconfig file, or set host (" + EnvHost + ") " +
	"together with token (" + EnvToken + "), client_certificate and client_key, or an exec block " +
	"(for EKS: exec { api_version = \"client.authentication.k8s.io/v1beta1\", command = \"aws\", args = [\"eks\", \"get-token\", \"--cluster-name\", ...] })")

// RESTConfig builds a client-go configuration the way the kubernetes and helm
// providers do:
//
//   - the kubeconfig files of config_path / config_paths (with ~ expanded) are
//     merged by clientcmd, config_context / config_context_auth_info /
//     config_context_cluster select what to use from them (they are ignored
//     when no kubeconfig is loaded);
//   - host, token, cluster_ca_certificate, client_certificate, client_key,
//     insecure, tls_server_name and proxy_url override the kubeconfig through
//     clientcmd's overrides; a host without a scheme gets https://, and, as
//     with kubectl, credentials are only used over TLS (an http:// host gets
//     no token or client certificate);
//   - an exec block replaces the credentials of the kubeconfig user (token,
//     client certificate, basic auth, auth provider, exec plugin); a token or
//     client certificate set in the provider block still takes precedence
//     over it, as client-go does for kubectl --token;
//   - qps, burst and the user agent are copied into the result.
//
// Without a kubeconfig and without a host it returns an error that says what
// to set. It reads the kubeconfig files but makes no network access and does
// not run the exec plugin. The retry layer is not installed here (see
// WrapRetries and NewClient).
func (s Settings) RESTConfig() (*rest.Config, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	paths, err := s.kubeconfigPaths()
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 && s.Host == "" {
		return nil, errNoCluster
	}

	raw := clientcmdapi.NewConfig()
	if len(paths) > 0 {
		rules := &clientcmd.ClientConfigLoadingRules{Precedence: paths}
		raw, err = rules.Load()
		if err != nil {
			return nil, fmt.Errorf("loading kubeconfig: %w", err)
		}
	}
	overrides, err := s.configOverrides(len(paths) > 0)
	if err != nil {
		return nil, err
	}

	cc := clientcmd.NewNonInteractiveClientConfig(*raw, s.ConfigContext, overrides, nil)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, clientConfigError(paths, err)
	}

	// clientcmd merges overrides field by field and cannot turn a kubeconfig's
	// insecure-skip-tls-verify off; an explicit insecure = false does.
	if s.Insecure != nil && !*s.Insecure {
		cfg.Insecure = false
	}
	s.applyExec(cfg)
	s.applyRateLimit(cfg)
	cfg.UserAgent = s.UserAgent
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	return cfg, nil
}

// configOverrides is what the settings override in the kubeconfig (or, without one,
// all there is): the context selection when a kubeconfig is loaded, the cluster and
// the credentials.
func (s Settings) configOverrides(kubeconfigLoaded bool) (*clientcmd.ConfigOverrides, error) {
	overrides := &clientcmd.ConfigOverrides{}
	if kubeconfigLoaded {
		overrides.CurrentContext = s.ConfigContext
		overrides.Context.AuthInfo = s.ConfigContextAuthInfo
		overrides.Context.Cluster = s.ConfigContextCluster
	}

	if s.Host != "" {
		u, _, err := rest.DefaultServerURL(s.Host, "", schema.GroupVersion{}, true)
		if err != nil {
			return nil, fmt.Errorf("host (%s): %w", EnvHost, err)
		}
		overrides.ClusterInfo.Server = u.String()
	}
	if s.ClusterCACertificate != "" {
		overrides.ClusterInfo.CertificateAuthorityData = []byte(s.ClusterCACertificate)
	}
	if s.Insecure != nil && *s.Insecure {
		overrides.ClusterInfo.InsecureSkipTLSVerify = true
	}
	if s.TLSServerName != "" {
		overrides.ClusterInfo.TLSServerName = s.TLSServerName
	}
	if s.ProxyURL != "" {
		overrides.ClusterInfo.ProxyURL = s.ProxyURL
	}
	if s.Token != "" {
		overrides.AuthInfo.Token = s.Token
	}
	if s.ClientCertificate != "" {
		overrides.AuthInfo.ClientCertificateData = []byte(s.ClientCertificate)
	}
	if s.ClientKey != "" {
		overrides.AuthInfo.ClientKeyData = []byte(s.ClientKey)
	}
	return overrides, nil
}

// clientConfigError says which kubeconfig (if any) failed to give a client configuration.
func clientConfigError(paths []string, err error) error {
	switch {
	case clientcmd.IsEmptyConfig(err) && len(paths) > 0:
		return fmt.Errorf("kubeconfig %s selects no cluster: set config_context (%s), a current-context in the file, or host (%s): %w",
			strings.Join(paths, ", "), EnvContext, EnvHost, err)
	case len(paths) > 0:
		return fmt.Errorf("kubeconfig %s: %w", strings.Join(paths, ", "), err)
	default:
		return fmt.Errorf("invalid cluster configuration: %w", err)
	}
}

// applyExec makes the exec settings, if any, cfg's only credentials besides an
// explicit token or client certificate.
func (s Settings) applyExec(cfg *rest.Config) {
	// Like clientcmd does for tokens and certificates, never hand exec
	// credentials to a plain-HTTP server.
	if s.Exec == nil || !rest.IsConfigTransportTLS(*cfg) {
		return
	}
	env := make([]clientcmdapi.ExecEnvVar, 0, len(s.Exec.Env))
	for k, v := range s.Exec.Env {
		env = append(env, clientcmdapi.ExecEnvVar{Name: k, Value: v})
	}
	sort.Slice(env, func(i, j int) bool { return env[i].Name < env[j].Name })
	// Replace, not merge with, whatever the kubeconfig user had.
	cfg.ExecProvider = &clientcmdapi.ExecConfig{
		APIVersion:      s.Exec.APIVersion,
		Command:         s.Exec.Command,
		Args:            append([]string(nil), s.Exec.Args...),
		Env:             env,
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
	cfg.AuthProvider = nil
	cfg.Username, cfg.Password = "", ""
	if s.Token == "" {
		cfg.BearerToken, cfg.BearerTokenFile = "", ""
	}
	if s.ClientCertificate == "" && s.ClientKey == "" {
		cfg.CertData, cfg.CertFile, cfg.KeyData, cfg.KeyFile = nil, "", nil, ""
	}
}

// applyRateLimit sets cfg's client-side QPS and burst from the settings.
func (s Settings) applyRateLimit(cfg *rest.Config) {
	if s.QPS != nil {
		cfg.QPS = float32(*s.QPS)
		if s.Burst == nil && cfg.Burst == 0 {
			// client-go refuses QPS without a burst; never let the burst be
			// below one second's worth of requests.
			cfg.Burst = max(rest.DefaultBurst, int(math.Ceil(*s.QPS)))
		}
	}
	if s.Burst != nil {
		cfg.Burst = int(*s.Burst)
	}
}

// Problem is one invalid setting: the provider attribute it concerns (a path such as
// "exec.command" or "retry.min_backoff") and what is wrong, with the KUBE_* variable when one
// can set it. Messages never contain certificate, key or token data.
type Problem struct {
	Attribute string
	Message   string
}

func (p Problem) Error() string { return p.Message }

// Problems checks what clientcmd would only notice late or with an unclear message, so the
// provider can report it when it is configured rather than at the first API call. The
// Attribute of each problem lets a caller drop those that concern a value not known yet.
func (s Settings) Problems() []Problem {
	var out []Problem
	add := func(attr, format string, args ...any) {
		out = append(out, Problem{Attribute: attr, Message: fmt.Sprintf(format, args...)})
	}
	checkPEM := func(attr, env, data string) bool {
		if data == "" {
			return true
		}
		if block, _ := pem.Decode([]byte(data)); block == nil {
			add(attr, "%s (%s) must be PEM data (-----BEGIN ...); if you have base64, decode it first (base64decode)", attr, env)
			return false
		}
		return true
	}
	if checkPEM("cluster_ca_certificate", EnvClusterCACert, s.ClusterCACertificate) && s.ClusterCACertificate != "" {
		if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM([]byte(s.ClusterCACertificate)) {
			add("cluster_ca_certificate", "cluster_ca_certificate (%s) contains no valid certificate", EnvClusterCACert)
		}
	}
	checkPEM("client_certificate", EnvClientCert, s.ClientCertificate)
	checkPEM("client_key", EnvClientKey, s.ClientKey)
	if s.Insecure != nil && *s.Insecure && s.ClusterCACertificate != "" {
		add("insecure", "insecure (%s) and cluster_ca_certificate (%s) cannot both be set: remove insecure to verify the server with the CA, or remove the CA", EnvInsecure, EnvClusterCACert)
	}
	if s.ClientKey != "" && s.ClientCertificate == "" && s.ConfigPath == "" && len(s.ConfigPaths) == 0 {
		add("client_certificate", "client_key (%s) is set without client_certificate (%s)", EnvClientKey, EnvClientCert)
	}
	if e := s.Exec; e != nil {
		if e.Command == "" {
			add("exec.command", "exec.command must be set, e.g. command = \"aws\" with args = [\"eks\", \"get-token\", \"--cluster-name\", \"<cluster>\"]")
		}
		switch e.APIVersion {
		case "client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1":
		case "":
			add("exec.api_version", "exec.api_version must be set (client.authentication.k8s.io/v1beta1 for aws eks get-token)")
		default:
			add("exec.api_version", "exec.api_version %q is not supported; use client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1", e.APIVersion)
		}
		for k := range e.Env {
			if k == "" {
				add("exec.env", "exec.env must not contain an empty variable name")
			}
		}
	}
	if s.QPS != nil && (math.IsNaN(*s.QPS) || math.IsInf(*s.QPS, 0) || *s.QPS <= 0 || *s.QPS > math.MaxFloat32) {
		add("qps", "qps (%s) must be a positive number, got %v", EnvQPS, *s.QPS)
	}
	if s.Burst != nil && (*s.Burst <= 0 || *s.Burst > math.MaxInt32) {
		add("burst", "burst (%s) must be a positive integer, got %d", EnvBurst, *s.Burst)
	}
	out = append(out, s.Retry.problems()...)
	return out
}

// validate joins Problems into one error.
func (s Settings) validate() error {
	return joinProblems(s.Problems())
}

// joinProblems is problems as one error, nil when there are none.
func joinProblems(problems []Problem) error {
	var errs []error
	for _, p := range problems {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// kubeconfigPaths returns config_path followed by config_paths, with ~
// expanded, duplicates removed, and each file checked to exist.
func (s Settings) kubeconfigPaths() ([]string, error) {
	var raw []string
	if s.ConfigPath != "" {
		raw = append(raw, s.ConfigPath)
	}
	raw = append(raw, s.ConfigPaths...)

	seen := make(map[string]bool, len(raw))
	var out []string
	for _, p := range raw {
		if strings.TrimSpace(p) == "" {
			continue
		}
		expanded, err := expandHome(p)
		if err != nil {
			return nil, err
		}
		if seen[expanded] {
			continue
		}
		seen[expanded] = true
		st, err := os.Stat(expanded)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %q (config_path / config_paths, %s / %s): %w", p, EnvConfigPath, EnvConfigPaths, err)
		}
		if st.IsDir() {
			return nil, fmt.Errorf("kubeconfig %q (config_path / config_paths, %s / %s) is a directory, not a file", p, EnvConfigPath, EnvConfigPaths)
		}
		out = append(out, expanded)
	}
	return out, nil
}

// expandHome replaces a leading ~ (alone or followed by a path separator)
// with the user's home directory.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expanding ~ in kubeconfig path %q: %w", p, err)
	}
	return filepath.Join(home, p[1:]), nil
}

// clone returns a deep copy, so a Client does not share slices, maps or
// pointers with the caller.
func (s Settings) clone() Settings {
	c := s
	c.ConfigPaths = append([]string(nil), s.ConfigPaths...)
	if s.Insecure != nil {
		v := *s.Insecure
		c.Insecure = &v
	}
	if s.QPS != nil {
		v := *s.QPS
		c.QPS = &v
	}
	if s.Burst != nil {
		v := *s.Burst
		c.Burst = &v
	}
	if s.Exec != nil {
		e := *s.Exec
		e.Args = append([]string(nil), s.Exec.Args...)
		if s.Exec.Env != nil {
			e.Env = make(map[string]string, len(s.Exec.Env))
			for k, v := range s.Exec.Env {
				e.Env[k] = v
			}
		}
		c.Exec = &e
	}
	return c
}
