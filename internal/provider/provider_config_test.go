package provider

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

var (
	execAttrTypes  = map[string]attr.Type{"api_version": types.StringType, "command": types.StringType, "args": types.ListType{ElemType: types.StringType}, "env": types.MapType{ElemType: types.StringType}}
	retryAttrTypes = map[string]attr.Type{"max_attempts": types.Int64Type, "min_backoff": types.StringType, "max_backoff": types.StringType, "max_elapsed": types.StringType}
	overrideTypes  = map[string]attr.Type{"accelerators": types.Int64Type, "accelerator_resource": types.StringType, "vcpu": types.Float64Type,
		"memory_in_gib": types.Float64Type, "efa": types.Int64Type, "mig_profiles": types.ListType{ElemType: types.StringType}}
)

// nullProviderModel is a provider block with every attribute null.
func nullProviderModel() providerModel {
	s := types.StringNull()
	return providerModel{
		ConfigPath: s, ConfigPaths: types.ListNull(types.StringType), ConfigContext: s, ConfigContextAuthInfo: s,
		ConfigContextCluster: s, Host: s, Token: s, ClusterCACertificate: s, ClientCertificate: s, ClientKey: s,
		Insecure: types.BoolNull(), TLSServerName: s, ProxyURL: s, QPS: types.Float64Null(), Burst: types.Int64Null(),
		InstanceTypes: types.MapNull(types.ObjectType{AttrTypes: overrideTypes}),
		Exec:          types.ObjectNull(execAttrTypes), Retry: types.ObjectNull(retryAttrTypes),
	}
}

func execBlock(apiVersion, command types.String, args types.List, env types.Map) types.Object {
	return types.ObjectValueMust(execAttrTypes, map[string]attr.Value{"api_version": apiVersion, "command": command, "args": args, "env": env})
}

func override(vcpu types.Float64, mig types.List) types.Object {
	return types.ObjectValueMust(overrideTypes, map[string]attr.Value{
		"accelerators": types.Int64Null(), "accelerator_resource": types.StringNull(), "vcpu": vcpu,
		"memory_in_gib": types.Float64Value(64), "efa": types.Int64Null(), "mig_profiles": mig,
	})
}

// Every attribute of the provider block, at every depth, may be unknown: configuring never
// fails on it, records exactly its path as pending, and checks the rest.
func TestReadProviderConfig_unknownAndNull(t *testing.T) {
	us, ks := types.StringUnknown(), types.StringValue
	strList := func(vs ...attr.Value) types.List { return types.ListValueMust(types.StringType, vs) }
	v1beta1 := ks("client.authentication.k8s.io/v1beta1")
	overrides := func(m map[string]attr.Value) types.Map {
		return types.MapValueMust(types.ObjectType{AttrTypes: overrideTypes}, m)
	}
	cases := []struct {
		name        string
		edit        func(*providerModel)
		pending     []string
		typePending string // an instance type whose capacity is pending
		allTypes    bool
	}{
		{"all null", func(*providerModel) {}, nil, "", false},
		{"config_path", func(m *providerModel) { m.ConfigPath = us }, []string{"config_path"}, "", false},
		{"config_paths", func(m *providerModel) { m.ConfigPaths = types.ListUnknown(types.StringType) }, []string{"config_paths"}, "", false},
		{"config_paths element", func(m *providerModel) { m.ConfigPaths = strList(ks("a"), us) }, []string{"config_paths[1]"}, "", false},
		{"config_context", func(m *providerModel) { m.ConfigContext = us }, []string{"config_context"}, "", false},
		{"config_context_auth_info", func(m *providerModel) { m.ConfigContextAuthInfo = us }, []string{"config_context_auth_info"}, "", false},
		{"config_context_cluster", func(m *providerModel) { m.ConfigContextCluster = us }, []string{"config_context_cluster"}, "", false},
		{"host", func(m *providerModel) { m.Host = us }, []string{"host"}, "", false},
		{"token", func(m *providerModel) { m.Token = us }, []string{"token"}, "", false},
		{"cluster_ca_certificate", func(m *providerModel) { m.ClusterCACertificate = us }, []string{"cluster_ca_certificate"}, "", false},
		{"client_certificate", func(m *providerModel) { m.ClientCertificate = us }, []string{"client_certificate"}, "", false},
		{"client_key", func(m *providerModel) { m.ClientKey = us }, []string{"client_key"}, "", false},
		{"insecure", func(m *providerModel) { m.Insecure = types.BoolUnknown() }, []string{"insecure"}, "", false},
		{"tls_server_name", func(m *providerModel) { m.TLSServerName = us }, []string{"tls_server_name"}, "", false},
		{"proxy_url", func(m *providerModel) { m.ProxyURL = us }, []string{"proxy_url"}, "", false},
		{"qps", func(m *providerModel) { m.QPS = types.Float64Unknown() }, []string{"qps"}, "", false},
		{"burst", func(m *providerModel) { m.Burst = types.Int64Unknown() }, []string{"burst"}, "", false},
		{"exec", func(m *providerModel) { m.Exec = types.ObjectUnknown(execAttrTypes) }, []string{"exec"}, "", false},
		{"exec.command (its 'must be set' check waits)", func(m *providerModel) {
			m.Exec = execBlock(v1beta1, us, types.ListNull(types.StringType), types.MapNull(types.StringType))
		}, []string{"exec.command"}, "", false},
		{"exec.api_version", func(m *providerModel) {
			m.Exec = execBlock(us, ks("aws"), types.ListNull(types.StringType), types.MapNull(types.StringType))
		}, []string{"exec.api_version"}, "", false},
		{"exec.args", func(m *providerModel) {
			m.Exec = execBlock(v1beta1, ks("aws"), types.ListUnknown(types.StringType), types.MapNull(types.StringType))
		}, []string{"exec.args"}, "", false},
		{"exec.args element (the reported example)", func(m *providerModel) {
			m.Exec = execBlock(v1beta1, ks("aws"), strList(ks("eks"), ks("get-token"), ks("--cluster-name"), us), types.MapNull(types.StringType))
		}, []string{"exec.args[3]"}, "", false},
		{"exec.env", func(m *providerModel) {
			m.Exec = execBlock(v1beta1, ks("aws"), types.ListNull(types.StringType), types.MapUnknown(types.StringType))
		}, []string{"exec.env"}, "", false},
		{"exec.env value", func(m *providerModel) {
			m.Exec = execBlock(v1beta1, ks("aws"), types.ListNull(types.StringType), types.MapValueMust(types.StringType, map[string]attr.Value{"AWS_PROFILE": us}))
		}, []string{`exec.env["AWS_PROFILE"]`}, "", false},
		{"retry", func(m *providerModel) { m.Retry = types.ObjectUnknown(retryAttrTypes) }, []string{"retry"}, "", false},
		{"retry fields", func(m *providerModel) {
			m.Retry = types.ObjectValueMust(retryAttrTypes, map[string]attr.Value{"max_attempts": types.Int64Unknown(), "min_backoff": us, "max_backoff": ks("1s"), "max_elapsed": types.StringNull()})
		}, []string{"retry.max_attempts", "retry.min_backoff"}, "", false},
		{"instance_types", func(m *providerModel) { m.InstanceTypes = types.MapUnknown(types.ObjectType{AttrTypes: overrideTypes}) }, []string{"instance_types"}, "", true},
		{"instance_types entry", func(m *providerModel) {
			m.InstanceTypes = overrides(map[string]attr.Value{"ml.new.type": types.ObjectUnknown(overrideTypes)})
		}, []string{`instance_types["ml.new.type"]`}, "ml.new.type", false},
		{"instance_types field", func(m *providerModel) {
			m.InstanceTypes = overrides(map[string]attr.Value{"ml.new.type": override(types.Float64Unknown(), types.ListNull(types.StringType))})
		}, []string{`instance_types["ml.new.type"]`}, "ml.new.type", false},
		{"instance_types mig_profiles element", func(m *providerModel) {
			m.InstanceTypes = overrides(map[string]attr.Value{"ml.p4d.24xlarge": override(types.Float64Value(96), strList(us))})
		}, []string{`instance_types["ml.p4d.24xlarge"]`}, "ml.p4d.24xlarge", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := nullProviderModel()
			c.edit(&m)
			var diags diag.Diagnostics
			conf := readProviderConfig(m, func(string) (string, bool) { return "", false }, &diags)
			if diags.HasError() {
				t.Fatalf("configuring failed: %v", diags)
			}
			if !slices.Equal(conf.pending, c.pending) {
				t.Errorf("pending %q, want %q", conf.pending, c.pending)
			}
			if conf.allTypesPending != c.allTypes {
				t.Errorf("allTypesPending %v, want %v", conf.allTypesPending, c.allTypes)
			}
			pd := &providerData{kube: kube.NewClient(conf.settings), pendingConfig: conf.pending, pendingTypes: conf.pendingTypes, allTypesPending: conf.allTypesPending}
			if c.typePending != "" && !pd.capacityPending(c.typePending) {
				t.Errorf("capacity of %s not pending", c.typePending)
			}
			if !c.allTypes && pd.capacityPending("ml.g5.12xlarge") {
				t.Errorf("capacity of an unrelated type is pending")
			}
			var clientDiags diag.Diagnostics
			if got := pd.client("test", &clientDiags); (got == nil) != (len(c.pending) > 0) || clientDiags.HasError() != (len(c.pending) > 0) {
				t.Errorf("client guard: client %v, diagnostics %v", got, clientDiags)
			}
		})
	}
}

// Mistakes in the provider block are reported when the provider is configured, each at its
// attribute: not at the first API call, which a plan of new resources never makes.
func TestReadProviderConfig_errorsAtConfigure(t *testing.T) {
	ks := types.StringValue
	cases := []struct {
		name string
		edit func(*providerModel)
		want string
	}{
		{"malformed PEM", func(m *providerModel) { m.ClusterCACertificate = ks("not a certificate") }, "cluster_ca_certificate (KUBE_CLUSTER_CA_CERT_DATA) must be PEM data"},
		{"exec without command", func(m *providerModel) {
			m.Exec = execBlock(ks("client.authentication.k8s.io/v1beta1"), types.StringNull(), types.ListNull(types.StringType), types.MapNull(types.StringType))
		}, "exec.command must be set"},
		{"min_backoff above max_backoff", func(m *providerModel) {
			m.Retry = types.ObjectValueMust(retryAttrTypes, map[string]attr.Value{"max_attempts": types.Int64Null(), "min_backoff": ks("2s"), "max_backoff": ks("1s"), "max_elapsed": types.StringNull()})
		}, "retry.min_backoff (2s) must not be greater than retry.max_backoff (1s)"},
		{"insecure with a CA", func(m *providerModel) {
			m.Insecure = types.BoolValue(true)
			m.ClusterCACertificate = ks(testCAPEM(t))
		}, "insecure (KUBE_INSECURE) and cluster_ca_certificate (KUBE_CLUSTER_CA_CERT_DATA) cannot both be set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := nullProviderModel()
			c.edit(&m)
			var diags diag.Diagnostics
			readProviderConfig(m, func(string) (string, bool) { return "", false }, &diags)
			if !diags.HasError() || !strings.Contains(fmt.Sprint(diags), c.want) {
				t.Fatalf("diagnostics %v, want an error containing %q", diags, c.want)
			}
		})
	}
}

// testCAPEM is a freshly generated self-signed CA certificate.
func testCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, IsCA: true,
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// The reported example: exec.args holds a value known only after apply (the cluster name of
// another resource). The plan of a new quota still computes every default; the apply then runs
// the credential plugin with the known value; and when the value is unknown again later, the
// existing quota keeps its state with a warning instead of failing the plan.
func TestAccProvider_unknownExecArgs(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: runs with TF_ACC=1 (make test-acc), like every TestAcc test")
	}
	acctest.PreCheck(t)
	const team = "pacc-exec"
	cleanupQueue(t, team)
	dir := t.TempDir()
	cred, err := json.Marshal(map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
		"status": map[string]any{"clientCertificateData": string(acc.config.CertData), "clientKeyData": string(acc.config.KeyData)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cred-a.json", "cred-b.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), cred, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Only the provider block may say how to connect: no kubeconfig from the environment.
	t.Setenv("KUBE_CONFIG_PATH", "")
	config := func(file string) string {
		return fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = %q
}

provider "hyperpod" {
  host                   = %q
  cluster_ca_certificate = %q
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "cat"
    args        = [terraform_data.cluster.output]
  }
}
`, filepath.Join(dir, file), acc.config.Host, string(acc.config.CAData)) +
			acctest.Quota(team).Resource("ml.g6e.48xlarge").Accelerators(4).HCL()
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{
			{
				Config: config("cred-a.json"),
				ConfigPlanChecks: preApply(
					planned(res0.AtMapKey("vcpu"), knownvalue.Float64Exact(96)),
					planned(res0.AtMapKey("memory_in_gib"), knownvalue.Float64Exact(768)),
					planned(tfjsonpath.New("cluster_queue_name"), knownvalue.StringExact(quota.ClusterQueueName(team))),
				),
				Check: checkOwnerRecorded(t, team),
			},
			{
				// The cluster resource changes: exec.args is unknown again during this plan.
				Config: config("cred-b.json"),
				ConfigPlanChecks: preApply(
					plancheck.ExpectResourceAction("terraform_data.cluster", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("terraform_data.cluster", tfjsonpath.New("output")),
					plancheck.ExpectResourceAction(quotaAddr, plancheck.ResourceActionNoop),
				),
				Check: checkOwnerRecorded(t, team),
			},
		},
	})
}

// An instance_types entry known only after apply: the entries of that type plan their computed
// amounts unknown, every other entry is computed during plan.
func TestAccProvider_unknownInstanceTypeEntry(t *testing.T) {
	const team = "pacc-unknown-type"
	cleanupQueue(t, team)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             checkQueueGone(t, team),
		Steps: []resource.TestStep{{
			Config: `
resource "terraform_data" "sizes" {
  input = 32
}

provider "hyperpod" {
  instance_types = {
    "ml.custom.8xlarge" = { vcpu = terraform_data.sizes.output, memory_in_gib = 128 }
  }
}
` + acctest.Quota(team).Body(`
  resources = [
    { instance_type = "ml.custom.8xlarge", memory_in_gib = 64 },
    { instance_type = "ml.g5.12xlarge", count = 1 },
  ]`).HCL(),
			ConfigPlanChecks: preApply(
				plancheck.ExpectUnknownValue(quotaAddr, res0.AtMapKey("vcpu")),
				plancheck.ExpectUnknownValue(quotaAddr, res0.AtMapKey("efa")),
				planned(res0.AtMapKey("memory_in_gib"), knownvalue.Float64Exact(64)),
				planned(tfjsonpath.New("resources").AtSliceIndex(1).AtMapKey("vcpu"), knownvalue.Float64Exact(48)),
				planned(tfjsonpath.New("resources").AtSliceIndex(1).AtMapKey("accelerators"), knownvalue.Int64Exact(4)),
			),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr(quotaAddr, "resources.0.vcpu", "16"),
				checkQuantity(t, team, "ml.custom.8xlarge", "cpu", "nominal", "16"),
			),
		}},
	})
}

// The same mistakes fail a plan of new resources, which makes no API call.
func TestAccProvider_configErrorsAtPlan(t *testing.T) {
	newQuota := acctest.Quota("pacc-config-errors").Resource("ml.g5.12xlarge").Count(1).HCL()
	steps := []resource.TestStep{}
	for _, c := range []struct{ block, want string }{
		{`cluster_ca_certificate = "bm90IGEgY2VydA=="`, `must be PEM data`},
		{"exec {\n    api_version = \"client.authentication.k8s.io/v1beta1\"\n    command = \"\"\n  }", `exec\.command must be set`},
		{"retry {\n    min_backoff = \"2s\"\n    max_backoff = \"1s\"\n  }", `retry\.min_backoff \(2s\) must not be greater than\s+retry\.max_backoff \(1s\)`},
		{"retry {\n    max_elapsed = \"soon\"\n  }", `retry\.max_elapsed is "soon", which is not a positive Go\s+duration`},
		// The SageMaker path's block, checked without a request to AWS.
		{"task_governance {\n    cluster_arn = \"my-cluster\"\n  }", `task_governance: cluster_arn:`},
		{"task_governance {\n    cluster_arn = \"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef012345\"\n    region = \"eu-west-1\"\n  }", `region "eu-west-1" differs from the cluster's region\s+"us-west-2"`},
		{"task_governance {\n    cluster_arn = \"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef012345\"\n    assume_role {\n      role_arn = \"arn:aws:iam::123456789012:role/quotas\"\n      duration = \"a while\"\n    }\n  }", `assume_role\.duration is "a while", which is not a Go\s+duration`},
	} {
		steps = append(steps, resource.TestStep{
			Config:      fmt.Sprintf("provider \"hyperpod\" {\n  host = \"https://127.0.0.1:1\"\n  %s\n}\n", c.block) + newQuota,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Invalid provider configuration.*` + c.want),
		})
	}
	// A block without the attribute it needs is refused by the CLI, from the schema it is served.
	for _, c := range []struct{ block, attribute string }{
		{"exec {\n    api_version = \"client.authentication.k8s.io/v1beta1\"\n  }", "command"},
		{"task_governance {\n    region = \"us-west-2\"\n  }", "cluster_arn"},
		{"task_governance {\n    cluster_arn = \"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef012345\"\n    assume_role {\n      duration = \"1h\"\n    }\n  }", "role_arn"},
	} {
		steps = append(steps, resource.TestStep{
			Config:      fmt.Sprintf("provider \"hyperpod\" {\n  host = \"https://127.0.0.1:1\"\n  %s\n}\n", c.block) + newQuota,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Missing required argument.*The argument "` + c.attribute + `" is required`),
		})
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})
}

// admission_preview decides when set; HYPERPOD_ADMISSION_PREVIEW decides otherwise; previews
// are on when neither says.
func TestReadAdmissionPreview(t *testing.T) {
	cases := []struct {
		name    string
		setting types.Bool
		env     string // "" = unset
		off     string
		invalid bool
	}{
		{"neither", types.BoolNull(), "", "", false},
		{"setting false", types.BoolValue(false), "", "admission_preview = false", false},
		{"setting true over env false", types.BoolValue(true), "false", "", false},
		{"setting false over env true", types.BoolValue(false), "true", "admission_preview = false", false},
		{"setting unknown", types.BoolUnknown(), "true", "admission_preview is not known until apply", false},
		{"env false", types.BoolNull(), "false", admissionPreviewEnv + "=false", false},
		{"env 0", types.BoolNull(), "0", admissionPreviewEnv + "=false", false},
		{"env true", types.BoolNull(), "true", "", false},
		{"env invalid", types.BoolNull(), "nope", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) {
				if k == admissionPreviewEnv && c.env != "" {
					return c.env, true
				}
				return "", false
			}
			var diags diag.Diagnostics
			off := readAdmissionPreview(c.setting, lookup, &diags)
			if off != c.off || diags.HasError() != c.invalid {
				t.Errorf("off = %q, errors %v; want %q, errors %v", off, diags, c.off, c.invalid)
			}
			if c.invalid && !strings.Contains(diags[0].Detail(), admissionPreviewEnv) {
				t.Errorf("the error does not name the variable: %s", diags[0].Detail())
			}
		})
	}
}
