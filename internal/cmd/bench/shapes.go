package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"text/template"
)

// Workspace shapes: the ways platform teams write one namespace and one quota per team with
// for_each, each measured beside a terraform_data configuration of the same shape. Terraform
// core's cost depends on the shape: an expression that names a for_each resource
// (hyperpod_team_namespace.t, even indexed as t[each.key]) makes Terraform build the value
// of every instance of it, once per instance that refers to it.

// workspaceShape is one way of writing the teams.
type workspaceShape int

const (
	shapeChained   workspaceShape = iota // quota for_each = the namespace resource, team = each.value.team
	shapeIndexed                         // quota for_each = var.teams, team = namespace[each.key].team
	shapeModule                          // module "team" { for_each = var.teams }: the example module per team
	shapeDependsOn                       // team = each.key, depends_on = [the namespace resource]
	shapePlain                           // team = each.key, no reference at all
)

var workspaceShapes = []workspaceShape{shapeChained, shapeIndexed, shapeModule, shapeDependsOn, shapePlain}

func (s workspaceShape) String() string {
	switch s {
	case shapeChained:
		return "chained"
	case shapeIndexed:
		return "indexed"
	case shapeModule:
		return "module"
	case shapeDependsOn:
		return "key-depends-on"
	case shapePlain:
		return "key-no-reference"
	}
	return fmt.Sprintf("shape(%d)", int(s))
}

// describe is how the report names the shape: the lines that make it.
func (s workspaceShape) describe() string {
	switch s {
	case shapeChained:
		return "`for_each = hyperpod_team_namespace.t`, `team = each.value.team`"
	case shapeIndexed:
		return "`for_each = var.teams`, `team = hyperpod_team_namespace.t[each.key].team`"
	case shapeModule:
		return "`module \"team\" { for_each = var.teams, team = each.key }` of examples/modules/hyperpod-team"
	case shapeDependsOn:
		return "`for_each = var.teams`, `team = each.key`, `depends_on = [hyperpod_team_namespace.t]`"
	case shapePlain:
		return "`for_each = var.teams`, `team = each.key`, no reference to the namespaces"
	}
	return s.String()
}

// parseShapes parses "chained,module" into shapes in the order of workspaceShapes.
func parseShapes(s string) ([]workspaceShape, error) {
	return parseChoices("shapes", s, workspaceShapes, workspaceShape.String)
}

// resourceAddresses reports whether the shape's objects live at the top-level addresses
// hyperpod_team_namespace.t[team] and hyperpod_compute_quota.q[team] (or
// terraform_data.ns/quota): shapes that share them share one applied state.
func (s workspaceShape) resourceAddresses() bool { return s != shapeModule }

// Where the module shapes find their modules, relative to the work directory.
const (
	shapeModuleDir      = "modules/hyperpod-team" // a copy of examples/modules/hyperpod-team
	shapeFloorModuleDir = "modules/team-data"     // the same module made of terraform_data
)

type shapeTeam struct {
	Team    string
	Entries []quotaEntry // sorted by instance type, as a for over the map yields them
}

var shapeTemplate = template.Must(template.New("shape").Parse(`
variable "teams" {
  description = "The teams, by name: each one's quota per instance type."
  type = map(object({
    allocations = map(object({
      accelerators = optional(number)
      vcpu         = optional(number)
    }))
  }))
  default = {
{{- range .Teams}}
    "{{.Team}}" = {
      allocations = {
{{- range .Entries}}
        "{{.InstanceType}}" = { {{.Field}} = {{.Value}} }
{{- end}}
      }
    }
{{- end}}
  }
}
{{if eq .Shape "module"}}
module "team" {
  source   = "./{{if .Floor}}` + shapeFloorModuleDir + `{{else}}` + shapeModuleDir + `{{end}}"
  for_each = var.teams

  team        = each.key
  allocations = each.value.allocations
}
{{- else if .Floor}}
resource "terraform_data" "ns" {
  for_each = var.teams
  input    = each.key
}

resource "terraform_data" "quota" {
  for_each = {{if eq .Shape "chained"}}terraform_data.ns{{else}}var.teams{{end}}
  input = {
    team      = {{.Team}}
    resources = [for type, a in {{.Allocations}} : { instance_type = type, accelerators = a.accelerators, vcpu = a.vcpu }]
  }
{{- if eq .Shape "key-depends-on"}}

  depends_on = [terraform_data.ns]
{{- end}}
}
{{- else}}
resource "hyperpod_team_namespace" "t" {
  for_each = var.teams
  team     = each.key
}

resource "hyperpod_compute_quota" "q" {
  for_each          = {{if eq .Shape "chained"}}hyperpod_team_namespace.t{{else}}var.teams{{end}}
  name              = each.key
  team              = {{.Team}}
  fair_share_weight = 1
  resources         = [for type, a in {{.Allocations}} : { instance_type = type, accelerators = a.accelerators, vcpu = a.vcpu }]
{{- if eq .Shape "key-depends-on"}}

  depends_on = [hyperpod_team_namespace.t]
{{- end}}
}
{{- end}}
`))

// shapeTeamExpr is the quota's team in shape s: taken from the namespace resource (chained,
// indexed) or the plain key.
func shapeTeamExpr(s workspaceShape, floor bool) string {
	ns, attr := "hyperpod_team_namespace.t", "team"
	if floor {
		ns, attr = "terraform_data.ns", "output"
	}
	switch s {
	case shapeChained:
		return "each.value." + attr
	case shapeIndexed:
		return ns + "[each.key]." + attr
	}
	return "each.key"
}

// shapeConfig renders the teams file of shape s at n teams: the provider's resources, or with
// floor the terraform_data resources of the same shape. The quota takes the fleet's types like
// the explicit configuration, with fair_share_weight 1 as the example module sets it, so every
// shape describes the same objects.
func shapeConfig(s workspaceShape, floor bool, n int) string {
	data := struct {
		Shape, Team, Allocations string
		Floor                    bool
		Teams                    []shapeTeam
	}{Shape: s.String(), Team: shapeTeamExpr(s, floor), Allocations: "each.value.allocations", Floor: floor}
	if s == shapeChained {
		// each.value is the namespace here; the allocations come from the variable.
		data.Allocations = "var.teams[each.key].allocations"
	}
	for i := 1; i <= n; i++ {
		entries := teamEntries(i, false)
		slices.SortFunc(entries, func(a, b quotaEntry) int { return strings.Compare(a.InstanceType, b.InstanceType) })
		data.Teams = append(data.Teams, shapeTeam{Team: teamName(i), Entries: entries})
	}
	var b bytes.Buffer
	if err := shapeTemplate.Execute(&b, data); err != nil {
		panic(err) // the template and its data are fixed: a failure is a bug here
	}
	kind := "provider"
	if floor {
		kind = "terraform_data"
	}
	return fmt.Sprintf("# Generated by internal/cmd/bench: %d teams, shape %s (%s).\n", n, s, kind) + b.String()
}

// floorTeamModule is the module of the module shape's floor: the example module's two
// resources, its edge and outputs like its own, in terraform_data.
const floorTeamModule = `# Generated by internal/cmd/bench: examples/modules/hyperpod-team in terraform_data.
variable "team" {
  type = string
}

variable "allocations" {
  type = map(object({
    accelerators = optional(number)
    vcpu         = optional(number)
  }))
}

variable "fair_share_weight" {
  type    = number
  default = 1
}

resource "terraform_data" "ns" {
  input = var.team
}

resource "terraform_data" "quota" {
  input = {
    team              = terraform_data.ns.output
    fair_share_weight = var.fair_share_weight
    resources         = [for type, a in var.allocations : { instance_type = type, accelerators = a.accelerators, vcpu = a.vcpu }]
  }
}

output "team" {
  value = terraform_data.quota.output.team
}

output "namespace" {
  value = terraform_data.ns.output
}

output "amounts" {
  value = { for r in terraform_data.quota.output.resources : r.instance_type => r }
}
`
