package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// The generated configurations use explicit resources rather than for_each: that is how the
// baseline figures were taken, "change one quota" is a one-line edit of one resource, and the
// terraform_data floor gets exactly the same graph. On the Kubernetes path each team is two
// resources (its namespace, then its quota: 2N nodes, N edges); on the SageMaker path, which
// writes no namespaces without a Kubernetes connection, one quota (N nodes, no edge).

// configKind selects the resources a configuration is made of.
type configKind int

const (
	providerConfig        configKind = iota // hyperpod_team_namespace + hyperpod_compute_quota
	terraformDataConfig                     // terraform_data pairs with the same dependency edges
	sagemakerConfig                         // hyperpod_compute_quota through task_governance
	terraformDataQuotas                     // one terraform_data per team, like sagemakerConfig
	sagemakerTaggedConfig                   // sagemakerConfig with tags on every quota
)

func (k configKind) String() string {
	switch k {
	case terraformDataConfig, terraformDataQuotas:
		return "terraform_data"
	case sagemakerConfig, sagemakerTaggedConfig:
		return "sagemaker"
	}
	return "provider"
}

// provider reports whether the configuration is made of the provider's resources.
func (k configKind) provider() bool {
	return k == providerConfig || k == sagemakerConfig || k == sagemakerTaggedConfig
}

// quotaEntry is one entry of a team's resources list.
type quotaEntry struct {
	InstanceType string
	Field        string // accelerators or vcpu
	Value        int
}

// fleetTypes are the instance types of the local control plane's fleet
// (localcluster.Fleet); each team uses three of them, and sizes GPU and Trainium types by
// accelerators, CPU-only types by vCPU.
var fleetTypes = []quotaEntry{
	{"ml.g5.12xlarge", "accelerators", 1},
	{"ml.p5.48xlarge", "accelerators", 1},
	{"ml.trn1.32xlarge", "accelerators", 1},
	{"ml.c5.4xlarge", "vcpu", 1},
}

// teamName is the team of the i-th (from 1) generated team: bench-0001, ...
func teamName(i int) string { return fmt.Sprintf("bench-%04d", i) }

// teamEntries are team i's three quota entries: the fleet's types without the (i mod 4)-th,
// so every type is used by three quarters of the teams. changed bumps the first amount.
func teamEntries(i int, changed bool) []quotaEntry {
	skip := i % len(fleetTypes)
	var out []quotaEntry
	for j, e := range fleetTypes {
		if j != skip {
			out = append(out, e)
		}
	}
	if changed {
		out[0].Value++
	}
	return out
}

type teamData struct {
	Index   string // 0001
	Team    string
	Entries []quotaEntry
}

// entryLines writes the entries of a resources list, each on a line of its own after indent:
// both kinds of configuration write them alike.
func entryLines(indent string, entries []quotaEntry) string {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "\n%s{ instance_type = \"%s\", %s = %d },", indent, e.InstanceType, e.Field, e.Value)
	}
	return b.String()
}

var teamsTemplate = template.Must(template.New("teams").Funcs(template.FuncMap{"entryLines": entryLines}).Parse(`
{{- range .Teams}}
{{- if eq $.Kind "provider"}}
resource "hyperpod_team_namespace" "t{{.Index}}" {
  team = "{{.Team}}"
}

resource "hyperpod_compute_quota" "t{{.Index}}" {
  name = "{{.Team}}"
  team = hyperpod_team_namespace.t{{.Index}}.team
{{- if $.FairShareWeight}}
  fair_share_weight = {{$.FairShareWeight}}
{{- end}}
  resources = [{{entryLines "    " .Entries}}
  ]
}
{{else if eq $.Kind "sagemaker"}}
resource "hyperpod_compute_quota" "t{{.Index}}" {
  name = "{{.Team}}"
  team = "{{.Team}}"
  resources = [{{entryLines "    " .Entries}}
  ]
{{- if $.Tagged}}
  tags = { team = "{{.Team}}" }
{{- end}}
}
{{else if eq $.Kind "terraform_data pairs"}}
resource "terraform_data" "ns_{{.Index}}" {
  input = "{{.Team}}"
}

resource "terraform_data" "quota_{{.Index}}" {
  input = {
    team = terraform_data.ns_{{.Index}}.output
    resources = [{{entryLines "      " .Entries}}
    ]
  }
}
{{else}}
resource "terraform_data" "quota_{{.Index}}" {
  input = {
    team = "{{.Team}}"
    resources = [{{entryLines "      " .Entries}}
    ]
  }
}
{{end}}
{{- end}}`))

// teamsConfig renders the teams file: n teams, with the quota of team `changed` (from 1;
// 0 for none) bumped by one.
func teamsConfig(kind configKind, n, changed int) string {
	return teamsSpec{kind: kind, n: n, entries: func(i int) []quotaEntry { return teamEntries(i, i == changed) }}.render()
}

// teamsSpec is what a teams file holds: n teams of kind, each with its entries and, when
// fairShareWeight is set, that weight (the provider's quotas only).
type teamsSpec struct {
	kind            configKind
	n               int
	entries         func(i int) []quotaEntry
	fairShareWeight int
}

func (s teamsSpec) render() string {
	data := struct {
		Kind            string
		Tagged          bool
		FairShareWeight int
		Teams           []teamData
	}{Kind: s.kind.String(), Tagged: s.kind == sagemakerTaggedConfig, FairShareWeight: s.fairShareWeight}
	if s.kind == terraformDataConfig {
		data.Kind = "terraform_data pairs"
	}
	for i := 1; i <= s.n; i++ {
		data.Teams = append(data.Teams, teamData{
			Index:   fmt.Sprintf("%04d", i),
			Team:    teamName(i),
			Entries: s.entries(i),
		})
	}
	var b bytes.Buffer
	if err := teamsTemplate.Execute(&b, data); err != nil {
		panic(err) // the template and its data are fixed: a failure is a bug here
	}
	return fmt.Sprintf("# Generated by internal/cmd/bench: %d teams (%s).\n", s.n, s.kind) + b.String()
}

// mainConfig is the file next to the teams: the terraform block and providerBlock, the
// provider's configuration ("" for terraform_data, which needs none).
func mainConfig(kind configKind, providerBlock string) string {
	if !kind.provider() {
		return "# Generated by internal/cmd/bench: terraform_data needs no provider.\n" +
			"terraform {\n  required_version = \">= 1.11\"\n}\n"
	}
	return `# Generated by internal/cmd/bench.
terraform {
  required_version = ">= 1.11"
  required_providers {
    hyperpod = {
      source = "quotaworks/hyperpod"
    }
  }
}
` + providerBlock
}

// kubernetesProvider is the provider block of the Kubernetes path: the counting proxy (plain
// HTTP; the proxy adds the credentials).
func kubernetesProvider(proxyURL string) string {
	return fmt.Sprintf("\nprovider \"hyperpod\" {\n  host = %q\n}\n", proxyURL)
}

// kubernetesProviderWithoutPreview is kubernetesProvider with the admission preview turned off.
func kubernetesProviderWithoutPreview(proxyURL string) string {
	return fmt.Sprintf("\nprovider \"hyperpod\" {\n  host              = %q\n  admission_preview = false\n}\n", proxyURL)
}

// sagemakerProvider is the provider block of the SageMaker path: the emulator, any static
// credentials, and no Kubernetes connection.
func sagemakerProvider(endpoint, clusterARN string) string {
	return fmt.Sprintf(`
provider "hyperpod" {
  task_governance {
    cluster_arn = %q
    endpoint    = %q
    access_key  = "bench"
    secret_key  = "bench"
  }
}
`, clusterARN, endpoint)
}

// cliConfig is the TF_CLI_CONFIG_FILE: dev_overrides make Terraform run the provider in
// pluginDir without `terraform init`; with no other installation method nothing is ever
// downloaded.
func cliConfig(pluginDir string) string {
	return fmt.Sprintf(`disable_checkpoint = true

provider_installation {
  dev_overrides {
    "quotaworks/hyperpod" = %q
  }
}
`, pluginDir)
}

// Files of a work directory.
const (
	mainFile  = "main.tf"
	teamsFile = "teams.tf"
	// queryFile holds the query scenario's list blocks, generatedFile what it generates.
	queryFile     = "teams.tfquery.hcl"
	generatedFile = "generated.tf"
)

// The resource types the query scenario lists: on the Kubernetes path each team's quota and
// namespace, the objects refresh-only reads; on the SageMaker path its quota.
var (
	kubernetesLists = []string{"hyperpod_compute_quota", "hyperpod_team_namespace"}
	sagemakerLists  = []string{"hyperpod_compute_quota"}
)

// queryConfig is the query scenario's list blocks: every team of the bench (bench-NNNN), n of
// them, of each resource type of lists.
func queryConfig(n int, lists []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Generated by internal/cmd/bench: the %d teams' objects, for terraform query.\n", n)
	for _, typ := range lists {
		fmt.Fprintf(&b, "\nlist %q \"teams\" {\n  provider = hyperpod\n  limit    = %d\n  config {\n    team_prefix = \"bench-\"\n  }\n}\n", typ, n)
	}
	return b.String()
}

// writeQueryDir creates dir with pdir's main file (the provider's configuration), the list blocks
// of queryConfig, and neither state nor generated configuration.
func writeQueryDir(dir, pdir string, n int, lists []string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	main, err := os.ReadFile(filepath.Join(pdir, mainFile))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, mainFile), main, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, queryFile), []byte(queryConfig(n, lists)), 0o644)
}

// writeWorkDir creates dir with both configuration files and no state.
func writeWorkDir(dir string, kind configKind, n int, providerBlock string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, mainFile), []byte(mainConfig(kind, providerBlock)), 0o644); err != nil {
		return err
	}
	return writeTeams(dir, kind, n, 0)
}

func writeTeams(dir string, kind configKind, n, changed int) error {
	return os.WriteFile(filepath.Join(dir, teamsFile), []byte(teamsConfig(kind, n, changed)), 0o644)
}

// objectReads is one GET of every object a refresh of n teams must look at: each team's
// Namespace, LocalQueue and ClusterQueue, and each instance type's ResourceFlavor once. It is
// the request part of the floor for plans and refresh-only: a property of the workload, so a
// provider that reads less (a LIST instead of many GETs) is not given a lower floor too.
func objectReads(n int) []recordedRequest {
	var out []recordedRequest
	get := func(uri string) { out = append(out, recordedRequest{Method: "GET", URI: uri}) }
	for i := 1; i <= n; i++ {
		ns := "hyperpod-ns-" + teamName(i)
		get("/api/v1/namespaces/" + ns)
		get("/apis/kueue.x-k8s.io/v1beta2/namespaces/" + ns + "/localqueues/" + ns + "-localqueue")
		get("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/" + ns + "-clusterqueue")
	}
	used := map[string]bool{}
	for i := 1; i <= n; i++ {
		for _, e := range teamEntries(i, false) {
			if !used[e.InstanceType] {
				used[e.InstanceType] = true
				get("/apis/kueue.x-k8s.io/v1beta2/resourceflavors/" + e.InstanceType)
			}
		}
	}
	return out
}
