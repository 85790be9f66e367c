package provider

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// fakePrivate is private state held in a map.
type fakePrivate map[string][]byte

func (p fakePrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}

// A plan that lowers a limit below what the team's workloads held at the last refresh warns,
// naming the instance type, the resource, the usage, the new limit and the workloads; one that
// keeps room does not.
func TestWarnImpact(t *testing.T) {
	ptrTo := func(s string) *string { return &s }
	one := int64(1)
	rc, problems := quota.Plan(catalog.Builtin(), quota.Config{Name: "q", Team: "a",
		Sharing:   quota.Sharing{Strategy: ptrTo(quota.StrategyDontLend)},
		Resources: []quota.Entry{{InstanceType: "ml.g5.12xlarge", Count: &one}}}) // 4 GPUs, no borrowing
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	stored := func(gpus string) fakePrivate {
		raw, _ := json.Marshal(storedUsage{Admitted: 2, Resources: []storedResourceUsage{{"ml.g5.12xlarge", "nvidia.com/gpu", gpus}}})
		return fakePrivate{privateUsage: raw}
	}
	var diags diag.Diagnostics
	warnImpact(context.Background(), stored("6"), catalog.Builtin(), rc, &diags)
	if len(diags) != 1 || diags.HasError() {
		t.Fatalf("diagnostics %v, want one warning", diags)
	}
	text := diags[0].Detail()
	for _, want := range []string{"nvidia.com/gpu on ml.g5.12xlarge to 4", "hold 6 of it now", "2 admitted workloads"} {
		if !strings.Contains(text, want) {
			t.Errorf("warning %q lacks %q", text, want)
		}
	}
	diags = nil
	warnImpact(context.Background(), stored("3"), catalog.Builtin(), rc, &diags)
	warnImpact(context.Background(), fakePrivate{}, catalog.Builtin(), rc, &diags)
	if len(diags) != 0 {
		t.Errorf("no warning expected, got %v", diags)
	}
	if usageForPrivate(quota.Usage{}) != nil {
		t.Error("a team holding nothing stores no usage")
	}
}
