package provider

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/zclconf/go-cty/cty"
	"sigs.k8s.io/yaml"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Tests of the guides' examples: every file under examples/guides is included by a guide in
// templates/guides (docs/guides after `make docs`), and every directory of .tf files is planned.
//
// How a directory is planned:
//
//   - Its .tf files, without their `terraform {}` and `provider "hyperpod" {}` blocks, are planned
//     against the acceptance tests' cluster (the local control plane, or the cluster
//     KUBE_CONFIG_PATH names), with the provider under test configured from KUBE_CONFIG_PATH as
//     TestMain set it, so the guides' provider blocks never point the plan elsewhere. The examples
//     only add teams (all named guide-*), so the plan makes no API request for them; data sources
//     read the cluster; variables without a default get the values of guideVariableValue. The
//     plan must not be empty, and some directories have checks of the
//     planned values below (the numbers the guides quote).
//   - Two file names have a role. aws.tf holds what needs the AWS provider and credentials
//     (data "aws_eks_cluster" and provider "aws"), which cannot be planned here: it is left out.
//     imports.tf holds import blocks, which need existing objects: the directory is planned once
//     more with it (without its terraform and provider blocks, as above), expecting the provider's (or Terraform's) error for a team that does not
//     exist, which shows that the blocks parse and their IDs reach the provider.
//   - The stripped blocks are planned separately, offline, in a subtest: the directory's
//     `terraform {}` blocks (their required_providers reduced to hyperpod) and every
//     `provider "hyperpod" {}` block, aws.tf's included, with data "aws_eks_cluster" replaced by
//     fixed values (an unreachable endpoint and a self-signed CA), variables without a default
//     given one, and every KUBE_* variable cleared, together with one new quota. Configuring the
//     provider checks its settings (PEM data, exec, retry) without connecting, and planning a new
//     quota makes no request, so the plan succeeds without any cluster. The blocks name the
//     provider as quotaworks/hyperpod, so this subtest serves the provider under that namespace
//     (TF_ACC_PROVIDER_NAMESPACE, as examples_complete_test.go does). A directory of
//     guideOfflinePlanChecks is planned there whole instead of the one new quota: its resources
//     with its own provider block, without any cluster or AWS API.
//   - A .hcl file is a snippet the guide shows on its own (a provider block, a step of a
//     migration). It must parse; its provider "hyperpod" and variable blocks join the offline
//     plan above, while its other blocks (removed, import) need a configuration around them and
//     are not planned.

const guidesDir = "../../examples/guides"

const (
	guideAWSFile     = "aws.tf"
	guideImportsFile = "imports.tf"
	guideSnippetExt  = ".hcl"
)

// guideVariableValues stand in for the guides' variables that have no default and whose value
// the provider checks; any other such variable gets "guide-<name>".
var guideVariableValues = map[string]string{
	"hyperpod_cluster_arn": "arn:aws:sagemaker:us-west-2:111122223333:cluster/abcd1234efgh",
}

// guideVariableValue is the value a guide's variable without a default is planned with.
func guideVariableValue(name string) string {
	if value, ok := guideVariableValues[name]; ok {
		return value
	}
	return "guide-" + name
}

// isGuideSnippet reports whether a file name is a snippet's (not Terraform's lock file).
func isGuideSnippet(name string) bool {
	return strings.HasSuffix(name, guideSnippetExt) && !strings.HasPrefix(name, ".")
}

// missingImportTarget is the error of planning import blocks for teams that do not exist: the
// provider's "Cannot import ..." error; import blocks without a resource block (for
// -generate-config-out) fail before any import.
var missingImportTarget = regexp.MustCompile(`Cannot import (team namespace|compute quota|priority classes)|` +
	`Configuration for import target does not exist`)

// guidePlanChecks are checks of the planned values of a directory (relative to guidesDir): the
// numbers the guides and the examples' comments quote.
var guidePlanChecks = map[string][]plancheck.PlanCheck{
	"getting-started/first-quota": {
		guideEntry("hyperpod_compute_quota.research", 0, 2, 24, 96, 1),
		plancheck.ExpectKnownOutputValue("queue_label", knownvalue.StringExact("kueue.x-k8s.io/queue-name: hyperpod-ns-guide-research-localqueue")),
	},
	"getting-started/eks": {
		guideEntry("hyperpod_compute_quota.research", 0, 8, 192, 2048, 32),
		guideEntry("hyperpod_compute_quota.inference", 0, 8, 96, 384, 2),
	},
	"quotas-and-kueue/ratios": {
		guideEntry("hyperpod_compute_quota.research", 0, 4, 96, 1024, 32),
		guideEntry("hyperpod_compute_quota.data_prep", 0, 0, 40, 80, 0),
		guideEntry("hyperpod_compute_quota.data_prep", 1, 0, 1.45, 2.9, 0),
		guideEntry("hyperpod_compute_quota.notebooks", 0, 0, 3.428, 41.142578125, 4),
		guideEntry("hyperpod_compute_quota.notebooks", 1, 0, 72, 768, 32),
		guideEntry("hyperpod_compute_quota.inference", 0, 8, 96, 384, 2),
		guideEntry("hyperpod_compute_quota.trainium", 0, 8, 64, 384, 8),
		plancheck.ExpectKnownOutputValue("half_a_p5", knownvalue.ObjectExact(map[string]knownvalue.Check{
			"accelerators": knownvalue.Int64Exact(4), "vcpu": knownvalue.Float64Exact(96),
			"memory_in_gib": knownvalue.Float64Exact(1024), "efa": knownvalue.Int64Exact(32),
			"accelerator_partition": knownvalue.Null(),
		})),
	},
	"quotas-and-kueue/sharing": {
		guideEntry("hyperpod_compute_quota.evaluation", 0, 8, 192, 2048, 32),
		guideEntry("hyperpod_compute_quota.research", 0, 8, 192, 2048, 32),
		guideEntry("hyperpod_compute_quota.sandbox", 0, 1, 12, 48, 1),
		plancheck.ExpectKnownValue("hyperpod_compute_quota.sandbox", tfjsonpath.New("cohort"), knownvalue.StringExact("guide-sandbox-pool")),
		plancheck.ExpectKnownValue("hyperpod_compute_quota.research", tfjsonpath.New("resource_sharing").AtMapKey("borrow_limit"), knownvalue.Int64Exact(100)),
		plancheck.ExpectKnownValue("hyperpod_cluster_scheduler_config.policy", tfjsonpath.New("priority_classes").AtSliceIndex(1).AtMapKey("priority_class_name"),
			knownvalue.StringExact("training-priority")),
	},
}

// guideOfflinePlanChecks are the directories whose whole configuration plans offline with their
// own provider block (the add-on's getting-started configuration: the SageMaker path plans new
// quotas and namespaces without a request), with checks of that plan.
var guideOfflinePlanChecks = map[string][]plancheck.PlanCheck{
	"getting-started-task-governance/first-quota": {
		guideEntryEFA("hyperpod_compute_quota.research", 0, 2, 24, 96, knownvalue.Null()),
		plancheck.ExpectUnknownValue("hyperpod_compute_quota.research", tfjsonpath.New("quota_id")),
		plancheck.ExpectKnownOutputValue("queue_label", knownvalue.StringExact("kueue.x-k8s.io/queue-name: hyperpod-ns-guide-research-localqueue")),
	},
}

// guideEntry checks the planned amounts of entry i of a quota's resources.
func guideEntry(addr string, i int, accelerators int64, vcpu, memoryInGiB float64, efa int64) plancheck.PlanCheck {
	return guideEntryEFA(addr, i, accelerators, vcpu, memoryInGiB, knownvalue.Int64Exact(efa))
}

// guideEntryEFA is guideEntry with any check of efa: null on the SageMaker path, where the
// add-on decides it.
func guideEntryEFA(addr string, i int, accelerators int64, vcpu, memoryInGiB float64, efa knownvalue.Check) plancheck.PlanCheck {
	at := func(attr string) tfjsonpath.Path { return tfjsonpath.New("resources").AtSliceIndex(i).AtMapKey(attr) }
	return guideChecks{
		plancheck.ExpectKnownValue(addr, at("accelerators"), knownvalue.Int64Exact(accelerators)),
		plancheck.ExpectKnownValue(addr, at("vcpu"), knownvalue.Float64Exact(vcpu)),
		plancheck.ExpectKnownValue(addr, at("memory_in_gib"), knownvalue.Float64Exact(memoryInGiB)),
		plancheck.ExpectKnownValue(addr, at("efa"), efa),
	}
}

// Every .tf example of the guides plans against the acceptance tests' cluster, its stripped
// terraform and provider blocks plan offline, and its import blocks reach the provider.
func TestAccGuideExamples_plan(t *testing.T) {
	acctest.RequireCluster(t)
	dirs := guideExampleDirs(t)
	if len(dirs) == 0 {
		t.Fatalf("no examples under %s", guidesDir)
	}
	for dir := range guidePlanChecks {
		if !slices.Contains(dirs, dir) {
			t.Errorf("guidePlanChecks names %s, which holds no example", dir)
		}
	}
	for dir := range guideOfflinePlanChecks {
		if !slices.Contains(dirs, dir) {
			t.Errorf("guideOfflinePlanChecks names %s, which holds no example", dir)
		}
	}
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			ex := loadGuideExample(t, dir)
			var steps []resource.TestStep
			if ex.plannable {
				steps = append(steps, resource.TestStep{
					Config:             ex.config,
					ConfigVariables:    ex.values,
					PlanOnly:           true,
					ExpectNonEmptyPlan: true,
					ConfigPlanChecks:   resource.ConfigPlanChecks{PostApplyPreRefresh: guidePlanChecks[dir]},
				})
			} else if len(guidePlanChecks[dir]) > 0 {
				t.Fatalf("%s has plan checks but nothing to plan", dir)
			}
			if ex.imports != "" {
				steps = append(steps, resource.TestStep{
					Config:          ex.config + "\n" + ex.imports,
					ConfigVariables: ex.values,
					PlanOnly:        true,
					ExpectError:     missingImportTarget,
				})
			}
			if len(steps) > 0 {
				resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})
			}
			if len(ex.providers) > 0 || len(ex.terraform) > 0 {
				t.Run("terraform and provider blocks", func(t *testing.T) { planGuideProviderBlocks(t, ex) })
			}
		})
	}
}

// guideExample is one directory of examples/guides, split as TestAccGuideExamples_plan plans it.
type guideExample struct {
	dir string
	// config is the directory's .tf files except aws.tf and imports.tf, without terraform and
	// provider "hyperpod" blocks; plannable says it declares a resource or data source. body
	// is config without variable blocks too.
	config, body string
	plannable    bool
	// values are given to config's variables that have no default.
	values  config.Variables
	imports string
	// The blocks planned offline, from every file.
	terraform, providers, variables []*hclwrite.Block
}

// guideExampleDirs lists the directories under guidesDir that hold .tf files or snippets,
// relative to it.
func guideExampleDirs(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(guidesDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != guidesDir {
			return filepath.SkipDir // e.g. a .terraform directory of someone's local init
		}
		if !d.IsDir() && (strings.HasSuffix(d.Name(), ".tf") || isGuideSnippet(d.Name())) {
			rel, err := filepath.Rel(guidesDir, filepath.Dir(path))
			if err != nil {
				return err
			}
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, 0, len(seen))
	for d := range seen {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

func loadGuideExample(t *testing.T, dir string) guideExample {
	t.Helper()
	ex := guideExample{dir: dir}
	files, err := filepath.Glob(filepath.Join(guidesDir, filepath.FromSlash(dir), "*.tf"))
	if err != nil {
		t.Fatal(err)
	}
	snippets, err := filepath.Glob(filepath.Join(guidesDir, filepath.FromSlash(dir), "*"+guideSnippetExt))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range snippets {
		if isGuideSnippet(filepath.Base(s)) {
			files = append(files, s)
		}
	}
	sort.Strings(files)
	var text, body strings.Builder
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, diags := hclwrite.ParseConfig(raw, path, hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", path, diags.Error())
		}
		name := filepath.Base(path)
		for _, b := range f.Body().Blocks() {
			switch {
			case b.Type() == "terraform":
				ex.terraform = append(ex.terraform, b)
			case b.Type() == "provider" && slices.Equal(b.Labels(), []string{"hyperpod"}):
				ex.providers = append(ex.providers, b)
			case b.Type() == "variable":
				ex.variables = append(ex.variables, b)
				if b.Body().GetAttribute("default") == nil && !isGuideSnippet(name) && name != guideAWSFile {
					if ex.values == nil {
						ex.values = config.Variables{}
					}
					ex.values[b.Labels()[0]] = config.StringVariable(guideVariableValue(b.Labels()[0]))
				}
			}
		}
		switch {
		case isGuideSnippet(name), name == guideAWSFile:
			continue
		}
		for _, b := range f.Body().Blocks() {
			switch {
			case b.Type() == "terraform", b.Type() == "provider" && slices.Equal(b.Labels(), []string{"hyperpod"}):
				f.Body().RemoveBlock(b)
			case b.Type() == "provider":
				t.Fatalf("%s configures provider %v: only %s may need other providers", path, b.Labels(), guideAWSFile)
			case (b.Type() == "resource" || b.Type() == "data") && name != guideImportsFile:
				ex.plannable = true
			}
		}
		if name == guideImportsFile {
			ex.imports += string(f.Bytes())
			continue
		}
		fmt.Fprintf(&text, "# %s\n%s\n", name, f.Bytes())
		for _, b := range f.Body().Blocks() {
			if b.Type() == "variable" {
				f.Body().RemoveBlock(b)
			}
		}
		fmt.Fprintf(&body, "# %s\n%s\n", name, f.Bytes())
	}
	ex.config, ex.body = text.String(), body.String()
	return ex
}

// eksClusterRef is a reference to an attribute of a data "aws_eks_cluster".
var eksClusterRef = regexp.MustCompile(`\bdata\.aws_eks_cluster\.([A-Za-z0-9_-]+)`)

// planGuideProviderBlocks plans the directory's terraform and provider "hyperpod" blocks with
// one new quota, offline (see the comment at the top).
func planGuideProviderBlocks(t *testing.T, ex guideExample) {
	t.Setenv("TF_ACC_PROVIDER_NAMESPACE", "quotaworks")
	for _, ev := range kube.EnvVars {
		t.Setenv(ev.Variable, "")
	}
	var cfg strings.Builder

	if len(ex.terraform) == 0 {
		cfg.WriteString("terraform {\n  required_providers {\n    hyperpod = {\n      source = \"quotaworks/hyperpod\"\n    }\n  }\n}\n")
	}
	for _, b := range ex.terraform {
		f := hclwrite.NewEmptyFile()
		b = f.Body().AppendBlock(b)
		for _, rp := range b.Body().Blocks() {
			if rp.Type() != "required_providers" {
				continue
			}
			for name := range rp.Body().Attributes() {
				if name != "hyperpod" {
					rp.Body().RemoveAttribute(name) // e.g. hashicorp/aws, which the test cannot install
				}
			}
		}
		cfg.Write(f.Bytes())
	}

	for _, b := range ex.variables {
		f := hclwrite.NewEmptyFile()
		b = f.Body().AppendBlock(b)
		if b.Body().GetAttribute("default") == nil {
			b.Body().SetAttributeValue("default", cty.StringVal(guideVariableValue(b.Labels()[0])))
		}
		cfg.Write(f.Bytes())
	}

	stubbed, taskGovernance := map[string]bool{}, false
	for _, b := range ex.providers {
		taskGovernance = taskGovernance || b.Body().FirstMatchingBlock("task_governance", nil) != nil
		f := hclwrite.NewEmptyFile()
		f.Body().AppendBlock(b)
		text := eksClusterRef.ReplaceAllStringFunc(string(f.Bytes()), func(ref string) string {
			name := eksClusterRef.FindStringSubmatch(ref)[1]
			stubbed[name] = true
			return "local.guide_stub_aws_eks_cluster_" + name
		})
		if strings.Contains(text, "data.") {
			t.Fatalf("a provider block of %s reads a data source the test cannot stub:\n%s", ex.dir, text)
		}
		cfg.WriteString(text)
	}
	if len(stubbed) > 0 {
		ca := base64.StdEncoding.EncodeToString(selfSignedCAPEM(t))
		cfg.WriteString("locals {\n")
		for name := range stubbed {
			fmt.Fprintf(&cfg, "  guide_stub_aws_eks_cluster_%s = {\n    name = %q\n    endpoint = \"https://127.0.0.1:1\"\n"+
				"    certificate_authority = [{ data = %q }]\n  }\n", name, "guide-"+name, ca)
		}
		cfg.WriteString("}\n")
	}

	var efa knownvalue.Check = knownvalue.Int64Exact(1)
	if taskGovernance {
		efa = knownvalue.Null()
	}
	checks, whole := guideOfflinePlanChecks[ex.dir]
	if whole {
		cfg.WriteString(ex.body)
	} else {
		cfg.WriteString(`
resource "hyperpod_compute_quota" "guide_provider_check" {
  name      = "guide-provider-check"
  team      = "guide-provider-check"
  resources = [{ instance_type = "ml.g5.12xlarge", count = 1 }]
}
`)
		checks = []plancheck.PlanCheck{guideEntryEFA("hyperpod_compute_quota.guide_provider_check", 0, 4, 48, 192, efa)}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             cfg.String(),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks:   resource.ConfigPlanChecks{PostApplyPreRefresh: checks},
		}},
	})
}

// selfSignedCAPEM is a throwaway CA certificate, so that a provider block with
// cluster_ca_certificate passes the provider's PEM and certificate checks.
func selfSignedCAPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "guide-examples-test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// guideChecks runs several plan checks as one.
type guideChecks []plancheck.PlanCheck

func (c guideChecks) CheckPlan(ctx context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	var errs []error
	for _, check := range c {
		r := &plancheck.CheckPlanResponse{}
		check.CheckPlan(ctx, req, r)
		if r.Error != nil {
			errs = append(errs, r.Error)
		}
	}
	resp.Error = errors.Join(errs...)
}

// guideTemplatesDir holds the guides' templates; tfplugindocs renders them to docs/guides.
const guideTemplatesDir = "../../templates/guides"

// guideInclude is a tffile or codefile call of a guide template.
var guideInclude = regexp.MustCompile(`\{\{-?\s*(?:tffile|codefile\s+"[^"]*")\s+"([^"]+)"\s*-?\}\}`)

// Every file under examples/guides is shown by a guide, and every file a guide shows exists:
// examples no guide includes would go untested by readers, and tfplugindocs fails on a missing one.
// Runs in the unit tests.
func TestGuideExamples_includedByGuides(t *testing.T) {
	templates, err := filepath.Glob(filepath.Join(guideTemplatesDir, "*.md.tmpl"))
	if err != nil || len(templates) == 0 {
		t.Fatalf("no guide templates in %s (%v)", guideTemplatesDir, err)
	}
	included := map[string]string{}
	for _, tmpl := range templates {
		raw, err := os.ReadFile(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range guideInclude.FindAllStringSubmatch(string(raw), -1) {
			included[m[1]] = filepath.Base(tmpl)
		}
	}
	examples := map[string]bool{}
	err = filepath.WalkDir(guidesDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != guidesDir {
			return filepath.SkipDir
		}
		if !d.IsDir() && !strings.HasPrefix(d.Name(), ".") && d.Name() != ".terraform.lock.hcl" {
			rel, err := filepath.Rel("../..", path)
			if err != nil {
				return err
			}
			examples[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for ex := range examples {
		if _, ok := included[ex]; !ok {
			t.Errorf("%s is included by no guide in templates/guides", ex)
		}
	}
	for file, tmpl := range included {
		if strings.HasPrefix(file, "examples/guides/") && !examples[file] {
			t.Errorf("%s includes %s, which does not exist", tmpl, file)
		}
	}
}

// The ClusterQueue that quotas-and-kueue/clusterqueue.yaml shows is the one the provider renders
// for hyperpod_compute_quota.research of quotas-and-kueue/sharing/main.tf (its configuration is
// repeated here). Runs in the unit tests.
func TestGuideExamples_clusterQueueYAML(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(guidesDir, "quotas-and-kueue", "clusterqueue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var shown kueue.ClusterQueue
	if err := yaml.UnmarshalStrict(raw, &shown); err != nil {
		t.Fatalf("clusterqueue.yaml: %v", err)
	}
	i := func(n int64) *int64 { return &n }
	s := func(v string) *string { return &v }
	cfg := quota.Config{
		Name: "guide-research", Team: "guide-research", FairShareWeight: 10, PreemptTeamTasks: s(quota.PreemptLowerPriority),
		Sharing: quota.Sharing{Strategy: s(quota.StrategyLendAndBorrow), BorrowLimit: i(100),
			AbsoluteBorrowLimits: []quota.AbsoluteBorrowLimit{{InstanceType: "ml.p5.48xlarge", Accelerators: i(4)}}},
		Resources: []quota.Entry{{InstanceType: "ml.p5.48xlarge", Accelerators: i(8)}},
	}
	cat := catalog.Builtin()
	rc, ps := quota.Plan(cat, cfg)
	if len(ps) > 0 {
		t.Fatalf("invalid configuration: %v", ps)
	}
	want, err := quota.RenderClusterQueue(cat, rc)
	if err != nil {
		t.Fatal(err)
	}
	if shown.APIVersion != want.APIVersion || shown.Kind != want.Kind || shown.Name != want.Name {
		t.Errorf("clusterqueue.yaml shows %s %s %q, the provider writes %s %s %q",
			shown.APIVersion, shown.Kind, shown.Name, want.APIVersion, want.Kind, want.Name)
	}
	if !maps.Equal(shown.Labels, want.Labels) {
		t.Errorf("clusterqueue.yaml shows labels %v, the provider writes %v", shown.Labels, want.Labels)
	}
	if len(quota.SpecDrift(want.Spec, shown.Spec)) > 0 {
		wantYAML, _ := yaml.Marshal(want.Spec)
		t.Errorf("clusterqueue.yaml shows another spec than the provider writes:\n%s", wantYAML)
	}
}
