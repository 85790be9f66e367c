package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// quotaShape is what makes a shape: how the quota block (or module call) iterates, where its
// team comes from and what it depends on.
type quotaShape struct {
	Block, ForEach, Team, DependsOn, Source string
}

// readQuotaShape finds the quota's block in a generated teams file (the module call in the
// module shape) and reads its for_each, team, depends_on and source.
func readQuotaShape(t *testing.T, hcl string) quotaShape {
	t.Helper()
	var blocks []string
	for _, head := range []string{`resource "hyperpod_compute_quota" "q" {`, `resource "terraform_data" "quota" {`, `module "team" {`} {
		if strings.Contains(hcl, head) {
			blocks = append(blocks, head)
		}
	}
	if len(blocks) != 1 {
		t.Fatalf("want exactly one quota block or module call, found %q in\n%s", blocks, hcl)
	}
	_, body, _ := strings.Cut(hcl, blocks[0])
	body, _, _ = strings.Cut(body, "\n}\n")
	q := quotaShape{Block: blocks[0]}
	attr := func(name string) string {
		m := regexp.MustCompile(`(?m)^\s+` + name + `\s+= (.+)$`).FindStringSubmatch(body)
		if m == nil {
			return ""
		}
		return m[1]
	}
	q.ForEach, q.Team, q.DependsOn, q.Source = attr("for_each"), attr("team"), attr("depends_on"), attr("source")
	return q
}

func TestShapeConfig(t *testing.T) {
	const (
		providerQuota = `resource "hyperpod_compute_quota" "q" {`
		floorQuota    = `resource "terraform_data" "quota" {`
		module        = `module "team" {`
	)
	for _, tc := range []struct {
		shape workspaceShape
		floor bool
		want  quotaShape
	}{
		{shapeChained, false, quotaShape{providerQuota, "hyperpod_team_namespace.t", "each.value.team", "", ""}},
		{shapeChained, true, quotaShape{floorQuota, "terraform_data.ns", "each.value.output", "", ""}},
		{shapeIndexed, false, quotaShape{providerQuota, "var.teams", "hyperpod_team_namespace.t[each.key].team", "", ""}},
		{shapeIndexed, true, quotaShape{floorQuota, "var.teams", "terraform_data.ns[each.key].output", "", ""}},
		{shapeModule, false, quotaShape{module, "var.teams", "each.key", "", `"./modules/hyperpod-team"`}},
		{shapeModule, true, quotaShape{module, "var.teams", "each.key", "", `"./modules/team-data"`}},
		{shapeDependsOn, false, quotaShape{providerQuota, "var.teams", "each.key", "[hyperpod_team_namespace.t]", ""}},
		{shapeDependsOn, true, quotaShape{floorQuota, "var.teams", "each.key", "[terraform_data.ns]", ""}},
		{shapePlain, false, quotaShape{providerQuota, "var.teams", "each.key", "", ""}},
		{shapePlain, true, quotaShape{floorQuota, "var.teams", "each.key", "", ""}},
	} {
		name := tc.shape.String()
		if tc.floor {
			name += "/terraform_data"
		}
		t.Run(name, func(t *testing.T) {
			hcl := shapeConfig(tc.shape, tc.floor, 3)
			if got := readQuotaShape(t, hcl); got != tc.want {
				t.Errorf("quota shape = %+v, want %+v", got, tc.want)
			}
			if got := strings.Count(hcl, `"bench-0`); got != 3 {
				t.Errorf("%d teams in var.teams, want 3", got)
			}
			// The namespaces are a for_each over the teams, written by the provider only in
			// the provider's configuration (in the module shape, inside the module).
			ns := map[bool]string{false: `resource "hyperpod_team_namespace" "t" {`, true: `resource "terraform_data" "ns" {`}
			if got, want := strings.Contains(hcl, ns[tc.floor]), tc.shape != shapeModule; got != want {
				t.Errorf("namespace resource present = %v, want %v", got, want)
			}
			if strings.Contains(hcl, "hyperpod_") == tc.floor && tc.shape != shapeModule {
				t.Errorf("a terraform_data floor must not name the provider's resources, nor the provider's configuration terraform_data:\n%s", hcl)
			}
		})
	}
}

// The chained shape's each.value is the namespace, so its allocations come from the
// variable; every other resource shape takes them from its own each.value.
func TestShapeConfigAllocations(t *testing.T) {
	for _, s := range []workspaceShape{shapeChained, shapeIndexed, shapeDependsOn, shapePlain} {
		want := "each.value.allocations"
		if s == shapeChained {
			want = "var.teams[each.key].allocations"
		}
		for _, floor := range []bool{false, true} {
			if hcl := shapeConfig(s, floor, 1); !strings.Contains(hcl, "for type, a in "+want+" :") {
				t.Errorf("%s (floor %v): resources not taken from %s:\n%s", s, floor, want, hcl)
			}
		}
	}
}

// Every shape describes the same teams: the allocations are the explicit configuration's,
// keyed by instance type.
func TestShapeConfigTeams(t *testing.T) {
	want := `  default = {
    "bench-0001" = {
      allocations = {
        "ml.c5.4xlarge" = { vcpu = 1 }
        "ml.g5.12xlarge" = { accelerators = 1 }
        "ml.trn1.32xlarge" = { accelerators = 1 }
      }
    }
    "bench-0002" = {
      allocations = {
        "ml.c5.4xlarge" = { vcpu = 1 }
        "ml.g5.12xlarge" = { accelerators = 1 }
        "ml.p5.48xlarge" = { accelerators = 1 }
      }
    }
  }`
	for _, s := range workspaceShapes {
		if hcl := shapeConfig(s, false, 2); !strings.Contains(hcl, want) {
			t.Errorf("%s: teams variable differs:\n%s", s, hcl)
		}
	}
}

func TestParseShapes(t *testing.T) {
	good := map[string][]workspaceShape{
		"chained,indexed,module,key-depends-on,key-no-reference": workspaceShapes,
		"module, chained,module":                                 {shapeChained, shapeModule},
	}
	for in, want := range good {
		if got, err := parseShapes(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("parseShapes(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", ",", "chain", "chained;module"} {
		if got, err := parseShapes(in); err == nil {
			t.Errorf("parseShapes(%q) = %v, want an error", in, got)
		}
	}
}

// The shapes at the same addresses share one apply; the module shape is applied on its own.
func TestShapeGroups(t *testing.T) {
	got := shapeGroups([]workspaceShape{shapeChained, shapeModule, shapePlain})
	want := [][]workspaceShape{{shapeChained, shapePlain}, {shapeModule}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("shapeGroups = %v, want %v", got, want)
	}
	if got := shapeGroups([]workspaceShape{shapeModule}); len(got) != 1 || !slices.Equal(got[0], []workspaceShape{shapeModule}) {
		t.Errorf("shapeGroups(module) = %v", got)
	}
}
