package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// listServed lists typeName through the served server s with the list block config attrs and
// returns the results.
func listServed(t *testing.T, s tfprotov6.ProviderServer, typeName string, attrs map[string]tftypes.Value, include bool, limit int64) []tfprotov6.ListResourceResult {
	t.Helper()
	ctx := context.Background()
	schemas, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ty := schemas.ListResourceSchemas[typeName].ValueType().(tftypes.Object)
	config := dynamicValue(t, ty, objectOf(ty, attrs))
	lists := s.(tfprotov6.ListResourceServer)
	v, err := lists.ValidateListResourceConfig(ctx, &tfprotov6.ValidateListResourceConfigRequest{TypeName: typeName, Config: &config})
	if err != nil || hasError(v.Diagnostics) {
		t.Fatalf("ValidateListResourceConfig: %v %v", err, v.Diagnostics)
	}
	stream, err := lists.ListResource(ctx, &tfprotov6.ListResourceRequest{TypeName: typeName, Config: &config, IncludeResource: include, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Collect(stream.Results)
}

// The served server (NewServer: the fast path, the schema server and rpcctx around the
// framework's) answers the list RPCs. A listed quota carries the identity and the state that an
// import of its team and the read after it save, through the same server; the team prefix
// selects, and the limit ends the list.
func TestServedListsQuotasAsAnImportReadsThem(t *testing.T) {
	emu, err := sagemakeremulator.Start(sagemakeremulator.Options{
		Clusters: []sagemakeremulator.Cluster{{Name: "c", InstanceGroups: []sagemakeremulator.InstanceGroup{
			{Name: "p5", InstanceType: "ml.p5.48xlarge", Count: 4}, {Name: "trn1", InstanceType: "ml.trn1.32xlarge", Count: 4},
			{Name: "c5", InstanceType: "ml.c5.4xlarge", Count: 4}}}},
		Settle: &sagemakeremulator.SettleRule{After: time.Nanosecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	p := newPlanCostServer(t, func(pt tftypes.Object) map[string]tftypes.Value {
		tg := pt.AttributeTypes["task_governance"].(tftypes.Object)
		s := func(v string) tftypes.Value { return tftypes.NewValue(tftypes.String, v) }
		return map[string]tftypes.Value{"task_governance": objectOf(tg, map[string]tftypes.Value{
			"cluster_arn": s(emu.ClusterARN("c")), "endpoint": s(emu.URL()), "access_key": s("k"), "secret_key": s("s"),
		})}
	})
	for _, team := range []string{"ml-a", "ml-b", "cv-a"} {
		p.create(t, "hyperpod_compute_quota", p.benchQuotaConfig(t, team))
	}
	for _, q := range emu.Quotas() {
		if *q.Target.TeamName == "ml-b" {
			if err := emu.SetTags(q.ARN, map[string]string{"cost-center": "42"}); err != nil {
				t.Fatal(err)
			}
		}
	}

	ctx := context.Background()
	quotaType := p.types["hyperpod_compute_quota"]
	results := listServed(t, p.srv, "hyperpod_compute_quota", map[string]tftypes.Value{"team_prefix": tftypes.NewValue(tftypes.String, "ml-")}, true, 100)
	var teams []string
	for _, res := range results {
		if hasError(res.Diagnostics) || res.Identity == nil || res.Resource == nil {
			t.Fatalf("result %q: identity %v, resource %v, diagnostics %v", res.DisplayName, res.Identity, res.Resource, res.Diagnostics)
		}
		identity := must(t, res.Identity.IdentityData, tftypes.Object{AttributeTypes: map[string]tftypes.Type{"team": tftypes.String}})
		var idAttrs map[string]tftypes.Value
		var team string
		if err := identity.As(&idAttrs); err != nil || idAttrs["team"].As(&team) != nil {
			t.Fatalf("identity %v: %v", identity, err)
		}
		teams = append(teams, team)
		imp, err := p.srv.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: "hyperpod_compute_quota", ID: team})
		if err != nil || hasError(imp.Diagnostics) {
			t.Fatalf("ImportResourceState %s: %v %v", team, err, imp.Diagnostics)
		}
		in := imp.ImportedResources[0]
		read, err := p.srv.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: "hyperpod_compute_quota",
			CurrentState: in.State, Private: in.Private, CurrentIdentity: in.Identity})
		if err != nil || hasError(read.Diagnostics) {
			t.Fatalf("ReadResource %s: %v %v", team, err, read.Diagnostics)
		}
		listed, imported := must(t, res.Resource, quotaType), must(t, read.NewState, quotaType)
		if !listed.Equal(imported) {
			t.Errorf("%s: listed\n%v\nthe import's read saves\n%v", team, listed, imported)
		}
		if !strings.Contains(fmt.Sprint(listed), "cost-center") != (team != "ml-b") {
			t.Errorf("%s: tags listed %v", team, listed)
		}
	}
	if !slices.Equal(teams, []string{"ml-a", "ml-b"}) {
		t.Errorf("teams listed with prefix ml-: %v", teams)
	}
	if got := listServed(t, p.srv, "hyperpod_compute_quota", nil, false, 2); len(got) != 2 || got[0].Resource != nil {
		t.Errorf("limit 2 without resource data: %d results, the first with resource %v", len(got), got[0].Resource)
	}
}

// The list RPCs are served for each list resource, each with its resource's identity.
func TestServedSchemaHasTheListResources(t *testing.T) {
	s, err := NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(tfprotov6.ListResourceServer); !ok {
		t.Fatalf("the served server %T does not answer the list RPCs", s)
	}
	resp, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || hasError(resp.Diagnostics) {
		t.Fatalf("GetProviderSchema: %v %v", err, resp.Diagnostics)
	}
	ids, err := s.GetResourceIdentitySchemas(context.Background(), &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hyperpod_compute_quota", "hyperpod_team_namespace", "hyperpod_cluster_scheduler_config"} {
		if resp.ListResourceSchemas[name] == nil || ids.IdentitySchemas[name] == nil {
			t.Errorf("%s: list schema %v, identity schema %v", name, resp.ListResourceSchemas[name], ids.IdentitySchemas[name])
		}
	}
}
