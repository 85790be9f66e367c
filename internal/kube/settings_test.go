package kube

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func ptr[T any](v T) *T { return &v }

func mapLookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

func TestApplyEnv(t *testing.T) {
	sep := string(filepath.ListSeparator)
	tests := []struct {
		name    string
		start   Settings
		env     map[string]string
		want    Settings
		wantErr []string
	}{
		{
			name: "every variable fills an unset field",
			env: map[string]string{
				EnvConfigPath: "/k/one", EnvConfigPaths: "/k/two" + sep + "/k/three",
				EnvContext: "ctx", EnvContextAuthInfo: "user", EnvContextCluster: "cluster",
				EnvHost: "https://h:6443", EnvToken: "tok", EnvClusterCACert: "ca-pem",
				EnvClientCert: "cert-pem", EnvClientKey: "key-pem", EnvInsecure: "true",
				EnvTLSServerName: "api.internal", EnvProxyURL: "http://proxy:3128",
				EnvQPS: "12.5", EnvBurst: "40",
			},
			want: Settings{
				ConfigPath: "/k/one", ConfigPaths: []string{"/k/two", "/k/three"},
				ConfigContext: "ctx", ConfigContextAuthInfo: "user", ConfigContextCluster: "cluster",
				Host: "https://h:6443", Token: "tok", ClusterCACertificate: "ca-pem",
				ClientCertificate: "cert-pem", ClientKey: "key-pem", Insecure: ptr(true),
				TLSServerName: "api.internal", ProxyURL: "http://proxy:3128",
				QPS: ptr(12.5), Burst: ptr(int64(40)),
			},
		},
		{
			name: "configured values win",
			start: Settings{
				ConfigContext: "mine", Host: "https://mine", Token: "mine", Insecure: ptr(false),
				QPS: ptr(1.0), Burst: ptr(int64(2)),
			},
			env: map[string]string{
				EnvContext: "env", EnvHost: "https://env", EnvToken: "env", EnvInsecure: "true",
				EnvQPS: "99", EnvBurst: "99",
			},
			want: Settings{
				ConfigContext: "mine", Host: "https://mine", Token: "mine", Insecure: ptr(false),
				QPS: ptr(1.0), Burst: ptr(int64(2)),
			},
		},
		{
			name:  "configured config_paths keeps KUBE_CONFIG_PATH out",
			start: Settings{ConfigPaths: []string{"/mine"}},
			env:   map[string]string{EnvConfigPath: "/env", EnvConfigPaths: "/env2"},
			want:  Settings{ConfigPaths: []string{"/mine"}},
		},
		{
			name:  "configured config_path keeps KUBE_CONFIG_PATHS out",
			start: Settings{ConfigPath: "/mine"},
			env:   map[string]string{EnvConfigPaths: "/env" + sep + "/env2"},
			want:  Settings{ConfigPath: "/mine"},
		},
		{
			name: "empty variables and empty list entries are ignored",
			env:  map[string]string{EnvHost: "", EnvInsecure: "", EnvQPS: "", EnvConfigPaths: sep + "/a" + sep + sep},
			want: Settings{ConfigPaths: []string{"/a"}},
		},
		{
			name: "insecure false and surrounding spaces",
			env:  map[string]string{EnvInsecure: " false ", EnvBurst: " 7 "},
			want: Settings{Insecure: ptr(false), Burst: ptr(int64(7))},
		},
		{
			name:    "bad insecure",
			env:     map[string]string{EnvInsecure: "yes please"},
			wantErr: []string{EnvInsecure, "yes please"},
		},
		{
			name:    "bad qps",
			env:     map[string]string{EnvQPS: "fast"},
			wantErr: []string{EnvQPS},
		},
		{
			name:    "qps NaN",
			env:     map[string]string{EnvQPS: "NaN"},
			wantErr: []string{EnvQPS},
		},
		{
			name:    "bad burst",
			env:     map[string]string{EnvBurst: "1.5"},
			wantErr: []string{EnvBurst},
		},
		{
			name:    "every bad variable is named",
			env:     map[string]string{EnvInsecure: "maybe", EnvQPS: "x", EnvBurst: "y", EnvHost: "https://still-applied"},
			want:    Settings{Host: "https://still-applied"},
			wantErr: []string{EnvInsecure, EnvQPS, EnvBurst},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.start
			err := s.ApplyEnv(mapLookup(tt.env))
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatal("want an error")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name %q", err, w)
					}
				}
				if tt.want.Host == "" {
					return
				}
			}
			if !reflect.DeepEqual(s, tt.want) {
				t.Errorf("got  %+v\nwant %+v", s, tt.want)
			}
		})
	}
}

// Every variable in EnvVars is read by ApplyEnv, and the attribute names are
// unique.
func TestEnvVarsMatchApplyEnv(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range EnvVars {
		if seen[e.Attribute] {
			t.Errorf("duplicate attribute %s", e.Attribute)
		}
		seen[e.Attribute] = true
		value := "x"
		switch e.Variable {
		case EnvInsecure:
			value = "true"
		case EnvQPS, EnvBurst:
			value = "3"
		}
		var s Settings
		if err := s.ApplyEnv(mapLookup(map[string]string{e.Variable: value})); err != nil {
			t.Fatalf("%s: %v", e.Variable, err)
		}
		if reflect.DeepEqual(s, Settings{}) {
			t.Errorf("%s (%s) is listed but ApplyEnv ignores it", e.Variable, e.Attribute)
		}
		if got := EnvVarFor(e.Attribute); got != e.Variable {
			t.Errorf("EnvVarFor(%s) = %s", e.Attribute, got)
		}
	}
	if len(EnvVars) != 15 {
		t.Errorf("%d variables, want 15", len(EnvVars))
	}
}

const twoContextKubeconfig = `apiVersion: v1
kind: Config
current-context: alpha
clusters:
- name: alpha-cluster
  cluster:
    server: https://alpha.example.com:6443
    insecure-skip-tls-verify: true
- name: beta-cluster
  cluster:
    server: https://beta.example.com:6443
    tls-server-name: beta.internal
users:
- name: alpha-user
  user:
    token: alpha-token
- name: beta-user
  user:
    token: beta-token
contexts:
- name: alpha
  context:
    cluster: alpha-cluster
    user: alpha-user
- name: beta
  context:
    cluster: beta-cluster
    user: beta-user
`

func writeKubeconfig(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRESTConfigKubeconfigContexts(t *testing.T) {
	path := writeKubeconfig(t, t.TempDir(), "config", twoContextKubeconfig)

	// current-context
	cfg, err := Settings{ConfigPath: path}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://alpha.example.com:6443" || cfg.BearerToken != "alpha-token" || !cfg.Insecure {
		t.Errorf("current context: host %q token ok %v insecure %v", cfg.Host, cfg.BearerToken == "alpha-token", cfg.Insecure)
	}

	// KUBE_CONFIG_PATH + KUBE_CTX select the other context.
	var s Settings
	if err := s.ApplyEnv(mapLookup(map[string]string{EnvConfigPath: path, EnvContext: "beta"})); err != nil {
		t.Fatal(err)
	}
	cfg, err = s.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://beta.example.com:6443" || cfg.BearerToken != "beta-token" || cfg.ServerName != "beta.internal" || cfg.Insecure {
		t.Errorf("KUBE_CTX=beta: host %q, server name %q, insecure %v", cfg.Host, cfg.ServerName, cfg.Insecure)
	}

	// config_context_cluster / config_context_auth_info override parts of the context.
	cfg, err = Settings{ConfigPath: path, ConfigContext: "alpha", ConfigContextCluster: "beta-cluster", ConfigContextAuthInfo: "beta-user"}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://beta.example.com:6443" || cfg.BearerToken != "beta-token" {
		t.Errorf("context overrides: host %q", cfg.Host)
	}

	// An unknown context is an error that names it.
	_, err = Settings{ConfigPath: path, ConfigContext: "gamma"}.RESTConfig()
	if err == nil || !strings.Contains(err.Error(), "gamma") {
		t.Errorf("unknown context: %v", err)
	}
}

func TestRESTConfigKubeconfigPathsAndHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	writeKubeconfig(t, home, "config", twoContextKubeconfig)
	extra := writeKubeconfig(t, t.TempDir(), "extra", `apiVersion: v1
kind: Config
clusters:
- name: gamma-cluster
  cluster:
    server: https://gamma.example.com
contexts:
- name: gamma
  context:
    cluster: gamma-cluster
    user: alpha-user
`)

	cfg, err := Settings{ConfigPaths: []string{"~/config", extra}, ConfigContext: "gamma"}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://gamma.example.com" || cfg.BearerToken != "alpha-token" {
		t.Errorf("merged kubeconfigs: host %q", cfg.Host)
	}

	_, err = Settings{ConfigPath: filepath.Join(home, "nope")}.RESTConfig()
	if err == nil || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), EnvConfigPath) {
		t.Errorf("missing kubeconfig: %v", err)
	}
}

func TestRESTConfigOverridesKubeconfig(t *testing.T) {
	path := writeKubeconfig(t, t.TempDir(), "config", twoContextKubeconfig)
	pki := newClientPKI(t)
	cfg, err := Settings{
		ConfigPath:           path,
		Host:                 "override.example.com:443",
		Token:                "override-token",
		ClusterCACertificate: pki.CertPEM,
		TLSServerName:        "api.override",
		ProxyURL:             "http://proxy.example.com:3128",
		QPS:                  ptr(50.0),
	}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://override.example.com:443" {
		t.Errorf("host %q", cfg.Host)
	}
	if cfg.BearerToken != "override-token" {
		t.Error("token not overridden")
	}
	if string(cfg.CAData) != pki.CertPEM || cfg.Insecure {
		t.Errorf("CA not overridden or insecure kept (insecure %v)", cfg.Insecure)
	}
	if cfg.ServerName != "api.override" {
		t.Errorf("server name %q", cfg.ServerName)
	}
	if cfg.Proxy == nil {
		t.Fatal("proxy not set")
	}
	u, err := cfg.Proxy(&http.Request{})
	if err != nil || u == nil || u.String() != "http://proxy.example.com:3128" {
		t.Errorf("proxy %v %v", u, err)
	}
	if cfg.QPS != 50 || cfg.Burst != 50 {
		t.Errorf("qps %v burst %d", cfg.QPS, cfg.Burst)
	}
	if cfg.UserAgent != DefaultUserAgent {
		t.Errorf("user agent %q", cfg.UserAgent)
	}

	// insecure = false beats the kubeconfig's insecure-skip-tls-verify.
	cfg, err = Settings{ConfigPath: path, Insecure: ptr(false)}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Insecure {
		t.Error("insecure = false did not override the kubeconfig")
	}
}

func TestRESTConfigHostAndTokenWithoutKubeconfig(t *testing.T) {
	cfg, err := Settings{Host: "https://api.example.com:6443", Token: "abc", Burst: ptr(int64(30))}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://api.example.com:6443" || cfg.BearerToken != "abc" || cfg.Burst != 30 {
		t.Errorf("host %q burst %d", cfg.Host, cfg.Burst)
	}
	if cfg.ExecProvider != nil || cfg.Insecure {
		t.Error("unexpected exec or insecure")
	}

	// No scheme: https, never plain HTTP by accident.
	cfg, err = Settings{Host: "10.0.0.1:6443", Insecure: ptr(true)}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://10.0.0.1:6443" || !cfg.Insecure {
		t.Errorf("host %q insecure %v", cfg.Host, cfg.Insecure)
	}

	// Credentials never travel over plain HTTP (clientcmd's rule).
	cfg, err = Settings{Host: "http://localhost:8001", Token: "abc"}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != "" {
		t.Error("token set for a plain http host")
	}
	cfg, err = Settings{Host: "http://localhost:8001", Exec: &ExecSettings{APIVersion: "client.authentication.k8s.io/v1", Command: "aws"}}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ExecProvider != nil {
		t.Error("exec plugin set for a plain http host")
	}

	pki := newClientPKI(t)
	cfg, err = Settings{Host: "https://api.example.com", ClientCertificate: pki.CertPEM, ClientKey: pki.KeyPEM, ClusterCACertificate: pki.CertPEM}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if string(cfg.CertData) != pki.CertPEM || string(cfg.KeyData) != pki.KeyPEM || string(cfg.CAData) != pki.CertPEM {
		t.Error("certificate data not mapped")
	}
}

func TestRESTConfigExec(t *testing.T) {
	exec := &ExecSettings{
		APIVersion: "client.authentication.k8s.io/v1beta1",
		Command:    "aws",
		Args:       []string{"eks", "get-token", "--cluster-name", "hyperpod"},
		Env:        map[string]string{"AWS_REGION": "us-west-2", "AWS_PROFILE": "ops"},
	}
	want := &clientcmdapi.ExecConfig{
		APIVersion:      "client.authentication.k8s.io/v1beta1",
		Command:         "aws",
		Args:            []string{"eks", "get-token", "--cluster-name", "hyperpod"},
		Env:             []clientcmdapi.ExecEnvVar{{Name: "AWS_PROFILE", Value: "ops"}, {Name: "AWS_REGION", Value: "us-west-2"}},
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}

	cfg, err := Settings{Host: "https://eks.example.com", Exec: exec}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.ExecProvider, want) {
		t.Errorf("exec provider\n got %+v\nwant %+v", cfg.ExecProvider, want)
	}

	// The exec block replaces the kubeconfig user's token.
	path := writeKubeconfig(t, t.TempDir(), "config", twoContextKubeconfig)
	cfg, err = Settings{ConfigPath: path, Exec: exec}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.ExecProvider, want) || cfg.BearerToken != "" {
		t.Errorf("exec over kubeconfig: exec %+v, token kept %v", cfg.ExecProvider, cfg.BearerToken != "")
	}

	// Changing the caller's settings later does not change a client's view.
	s := Settings{Host: "https://eks.example.com", Exec: exec}
	c := s.clone()
	exec.Args[0] = "changed"
	exec.Env["AWS_REGION"] = "changed"
	if c.Exec.Args[0] != "eks" || c.Exec.Env["AWS_REGION"] != "us-west-2" {
		t.Error("clone shares exec data with the caller")
	}

	for _, bad := range []*ExecSettings{
		{Command: "aws"},
		{APIVersion: "client.authentication.k8s.io/v1"},
		{APIVersion: "client.authentication.k8s.io/v1alpha1", Command: "aws"},
	} {
		if _, err := (Settings{Host: "https://h", Exec: bad}).RESTConfig(); err == nil || !strings.Contains(err.Error(), "exec.") {
			t.Errorf("exec %+v: want an exec error, got %v", bad, err)
		}
	}
}

func TestRESTConfigNothingConfigured(t *testing.T) {
	_, err := Settings{Token: "abc", ConfigContext: "x"}.RESTConfig()
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"config_path", EnvConfigPath, EnvConfigPaths, "host", EnvHost, "exec"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "abc") {
		t.Error("error contains the token")
	}
}

func TestRESTConfigValidation(t *testing.T) {
	pki := newClientPKI(t)
	const b64 = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUI=" // base64 of a PEM header, as EKS hands it out
	tests := []struct {
		name string
		s    Settings
		want []string
	}{
		{"base64 CA", Settings{Host: "https://h", ClusterCACertificate: b64}, []string{"cluster_ca_certificate", EnvClusterCACert, "base64decode"}},
		{"key without cert", Settings{Host: "https://h", ClientKey: pki.KeyPEM}, []string{"client_key", "client_certificate"}},
		{"cert without key", Settings{Host: "https://h", ClientCertificate: pki.CertPEM}, []string{"client-key"}},
		{"insecure with CA", Settings{Host: "https://h", Insecure: ptr(true), ClusterCACertificate: pki.CertPEM}, []string{"insecure", "cluster_ca_certificate"}},
		{"zero qps", Settings{Host: "https://h", QPS: ptr(0.0)}, []string{"qps", EnvQPS}},
		{"negative burst", Settings{Host: "https://h", Burst: ptr(int64(-1))}, []string{"burst", EnvBurst}},
		{"bad proxy", Settings{Host: "https://h", ProxyURL: "ftp://proxy"}, []string{"proxy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.s.RESTConfig()
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			for _, line := range strings.Split(pki.KeyPEM, "\n")[1:3] {
				if strings.Contains(err.Error(), line) {
					t.Error("error contains key data")
				}
			}
		})
	}
}

func TestRetrySettings(t *testing.T) {
	if got := (RetrySettings{}).WithDefaults(); got != DefaultRetry {
		t.Errorf("zero value: %+v", got)
	}
	if DefaultRetry != (RetrySettings{MaxAttempts: 10, MinBackoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second, MaxElapsed: 2 * time.Minute}) {
		t.Errorf("DefaultRetry = %+v", DefaultRetry)
	}
	got := RetrySettings{MaxAttempts: 2, MinBackoff: time.Minute}.WithDefaults()
	if got.MaxAttempts != 2 || got.MinBackoff != time.Minute || got.MaxBackoff != time.Minute {
		t.Errorf("min above default max: %+v", got)
	}
	if err := (RetrySettings{MaxElapsed: -time.Second}).Validate(); err == nil || !strings.Contains(err.Error(), "max_elapsed") {
		t.Errorf("negative max_elapsed: %v", err)
	}
	if err := (RetrySettings{MaxAttempts: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "max_attempts") {
		t.Errorf("negative attempts: %v", err)
	}
	if err := (RetrySettings{MinBackoff: 2 * time.Second, MaxBackoff: time.Second}).Validate(); err == nil || !strings.Contains(err.Error(), "min_backoff") {
		t.Errorf("min > max: %v", err)
	}
	if err := (RetrySettings{}).Validate(); err != nil {
		t.Errorf("zero value: %v", err)
	}
}
