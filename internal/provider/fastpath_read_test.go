package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/sagemakeremulator"
)

// TestFastPathReadsAsTheFramework reads quotas and namespaces that the SageMaker emulator holds
// (and one it does not) through the framework and through the fast path, with the private
// states and identities Terraform may send: as written, none, as an import wrote them, marked by
// an import, unreadable, with the provider's keys, and an identity that is missing, null or of
// another team. The answers must be the framework's, and the fast path must have answered every
// read whose identity the framework accepts.
func TestFastPathReadsAsTheFramework(t *testing.T) {
	f := newReadFixture(t)
	d := newDifferential(t, f.attrs)
	var answered, accepted int
	f.reads(t, d, func(req *tfprotov6.ReadResourceRequest, ok, fast bool) {
		if ok && string(req.Private) != "not json" {
			accepted++
			if fast {
				answered++
			}
		}
	})
	t.Logf("%d reads without an identity error, %d answered by the fast path", accepted, answered)
	if answered != accepted || accepted < 20 {
		t.Errorf("the fast path answered %d of the %d reads the framework answered without an identity error", answered, accepted)
	}
}

// readFixture is what the read tests read: quotas that the SageMaker emulator holds, as written
// and as the framework's import wrote them, namespaces, and a quota it does not hold.
type readFixture struct {
	attrs  func(tftypes.Object) map[string]tftypes.Value
	states []storedState
	// imported is the private state of the framework's import of a quota; marks are its keys
	// of the framework's own (those outside privateStateKeys): the import mark.
	imported []byte
	marks    map[string][]byte
}

// storedState is a state as Terraform stores it.
type storedState struct {
	typeName string
	state    *tfprotov6.DynamicValue
	private  []byte
}

func newReadFixture(t *testing.T) *readFixture {
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
	f := &readFixture{attrs: func(pt tftypes.Object) map[string]tftypes.Value {
		tg := pt.AttributeTypes["task_governance"].(tftypes.Object)
		s := func(v string) tftypes.Value { return tftypes.NewValue(tftypes.String, v) }
		return map[string]tftypes.Value{"task_governance": objectOf(tg, map[string]tftypes.Value{
			"cluster_arn": s(emu.ClusterARN("c")), "endpoint": s(emu.URL()), "access_key": s("k"), "secret_key": s("s"),
		})}
	}}
	writer := newPlanCostServer(t, f.attrs)
	for i := range 3 {
		team := fmt.Sprintf("team-%d", i)
		s, p := writer.create(t, "hyperpod_compute_quota", writer.benchQuotaConfig(t, team))
		f.states = append(f.states, storedState{"hyperpod_compute_quota", s, p})
		// A namespace is not written without Kubernetes: its state is its plan, made known.
		f.states = append(f.states, storedState{"hyperpod_team_namespace", plannedKnown(t, writer, "hyperpod_team_namespace", writer.benchNamespaceConfig(t, team)), nil})
	}
	imp, err := writer.srv.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{TypeName: "hyperpod_compute_quota", ID: "team-0"})
	if err != nil || len(imp.Diagnostics) > 0 || len(imp.ImportedResources) != 1 || len(imp.ImportedResources[0].Private) == 0 {
		t.Fatalf("ImportResourceState: %v %v", err, imp)
	}
	f.imported, f.marks = imp.ImportedResources[0].Private, map[string][]byte{}
	for k, v := range privateKeysIn(t, f.imported) {
		if !slices.Contains(privateStateKeys, k) {
			f.marks[k] = v
		}
	}
	if len(f.marks) == 0 {
		t.Fatalf("the framework's import wrote no key of its own: %s", f.imported)
	}
	f.states = append(f.states, storedState{"hyperpod_compute_quota", imp.ImportedResources[0].State, f.imported})
	ghost := objectOf(writer.types["hyperpod_compute_quota"], map[string]tftypes.Value{
		"id": tftypes.NewValue(tftypes.String, "ghost"), "team": tftypes.NewValue(tftypes.String, "ghost"),
		"quota_id": tftypes.NewValue(tftypes.String, "abcdefghijkl")})
	gv := dynamicValue(t, ghost.Type(), ghost)
	f.states = append(f.states, storedState{"hyperpod_compute_quota", &gv, nil})
	return f
}

// reads sends d each state of f with each private state and identity, requires the framework's
// answers, and tells seen whether the framework accepted the identity and the fast path answered.
func (f *readFixture) reads(t *testing.T, d *differential, seen func(req *tfprotov6.ReadResourceRequest, accepted, answered bool)) {
	for i, s := range f.states {
		team := objectAttributes(must(t, s.state, d.schemas[s.typeName].ValueType()))["team"]
		for _, private := range [][]byte{s.private, nil, f.imported, f.importMarked(t, s.private),
			[]byte(`{"takeover":"dHJ1ZQ==","unnamed":"dHJ1ZQ=="}`), f.importMarked(t, []byte(`{"takeover":"dHJ1ZQ=="}`)), []byte("not json")} {
			for _, idTeam := range []*tftypes.Value{nil, {}, &team, pointerTo(tftypes.NewValue(tftypes.String, "other"))} {
				req := &tfprotov6.ReadResourceRequest{TypeName: s.typeName, CurrentState: s.state, Private: private}
				if idTeam != nil {
					v := tftypes.NewValue(identityType, nil)
					if idTeam.Type() != nil {
						v = tftypes.NewValue(identityType, map[string]tftypes.Value{"team": *idTeam})
					}
					id := dynamicValue(t, identityType, v)
					req.CurrentIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &id}
				}
				before := d.delegatedReads.Load()
				accepted := d.read(t, fmt.Sprintf("read %d %s private %s identity %v", i, s.typeName, private, idTeam), req)
				seen(req, accepted, d.delegatedReads.Load() == before)
			}
		}
	}
}

// plannedKnown is the plan of a new resource of config, its unknown values made known.
func plannedKnown(t *testing.T, p *planCostServer, typeName string, config tfprotov6.DynamicValue) *tfprotov6.DynamicValue {
	ty := p.types[typeName]
	prior := dynamicValue(t, ty, tftypes.NewValue(ty, nil))
	plan, err := p.srv.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: typeName, PriorState: &prior, ProposedNewState: &config, Config: &config})
	if err != nil || hasError(plan.Diagnostics) {
		t.Fatalf("PlanResourceChange: %v %v", err, plan.Diagnostics)
	}
	known, err := tftypes.Transform(must(t, plan.PlannedState, ty), func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if v.IsKnown() {
			return v, nil
		}
		return tftypes.NewValue(tftypes.String, "known after apply"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := dynamicValue(t, ty, known)
	return &out
}

func pointerTo[T any](v T) *T { return &v }

func must(t *testing.T, v *tfprotov6.DynamicValue, ty tftypes.Type) tftypes.Value {
	t.Helper()
	out, err := v.Unmarshal(ty)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// importMarked is private with the framework's import mark added.
func (f *readFixture) importMarked(t *testing.T, private []byte) []byte {
	m := privateKeysIn(t, private)
	maps.Copy(m, f.marks)
	out, _ := json.Marshal(m)
	return out
}

// hasImportMark reports whether a private state holds the framework's import mark.
func (f *readFixture) hasImportMark(private []byte) bool {
	m := map[string][]byte{}
	if json.Unmarshal(private, &m) != nil {
		return false
	}
	for k := range f.marks {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// privateKeysIn are the keys of a private state as Terraform stores it.
func privateKeysIn(t *testing.T, private []byte) map[string][]byte {
	m := map[string][]byte{}
	if len(private) > 0 {
		if err := json.Unmarshal(private, &m); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// read sends req to both and fails when the answers differ; it reports whether the framework
// answered without an error about the identity.
func (d *differential) read(t *testing.T, label string, req *tfprotov6.ReadResourceRequest) bool {
	t.Helper()
	ctx := context.Background()
	want, err1 := d.framework.ReadResource(ctx, req)
	got, err2 := d.fast.ReadResource(ctx, req)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: errors %v %v", label, err1, err2)
	}
	if w, g := diagTexts(want.Diagnostics), diagTexts(got.Diagnostics); !sameStrings(w, g) {
		t.Errorf("%s: diagnostics differ\nframework: %q\nfast path: %q", label, w, g)
	}
	ty := d.schemas[req.TypeName].ValueType()
	if !sameDynamic(ty, want.NewState, got.NewState) {
		t.Errorf("%s: new states differ\nframework: %s\nfast path: %s", label, decoded(d, req.TypeName, want.NewState), decoded(d, req.TypeName, got.NewState))
	}
	if string(want.Private) != string(got.Private) {
		t.Errorf("%s: private states differ\nframework: %s\nfast path: %s", label, want.Private, got.Private)
	}
	if (want.NewIdentity == nil) != (got.NewIdentity == nil) ||
		want.NewIdentity != nil && !sameDynamic(identityType, want.NewIdentity.IdentityData, got.NewIdentity.IdentityData) {
		t.Errorf("%s: identities differ: %v, %v", label, want.NewIdentity, got.NewIdentity)
	}
	for _, dg := range want.Diagnostics {
		if dg.Summary == "Unexpected Identity Change" || dg.Summary == "Missing Resource Identity After Read" {
			return false
		}
	}
	return true
}

// TestFastPathUpgradesAsTheFramework upgrades seeded random states of both types as Terraform
// stores them (JSON), with an attribute the schema no longer has, unreadable, and of another
// schema version, through the framework and the fast path.
func TestFastPathUpgradesAsTheFramework(t *testing.T) {
	d := newDifferential(t, nil)
	g := &valueGen{rnd: rand.New(rand.NewSource(7))}
	ctx := context.Background()
	var answered int
	for i := range 300 {
		for typeName := range fastTypes {
			state := g.block(d.schemas[typeName].Block, false)
			m, _ := jsonOf(state).(map[string]any)
			if i%5 == 0 {
				m["removed_attribute"] = "x"
			}
			raw, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var version int64
			switch i % 7 {
			case 0:
				raw = []byte(`{"team": 1`)
			case 1:
				version = 1
			}
			req := &tfprotov6.UpgradeResourceStateRequest{TypeName: typeName, Version: version, RawState: &tfprotov6.RawState{JSON: raw}}
			want, err1 := d.framework.UpgradeResourceState(ctx, req)
			before := d.delegatedUpgrades.Load()
			got, err2 := d.fast.UpgradeResourceState(ctx, req)
			if err1 != nil || err2 != nil {
				t.Fatalf("upgrade %d: errors %v %v", i, err1, err2)
			}
			if w, g := diagTexts(want.Diagnostics), diagTexts(got.Diagnostics); !sameStrings(w, g) {
				t.Errorf("upgrade %d %s: diagnostics differ\nframework: %q\nfast path: %q", i, raw, w, g)
			}
			if !sameDynamic(d.schemas[typeName].ValueType(), want.UpgradedState, got.UpgradedState) {
				t.Errorf("upgrade %d %s: states differ", i, raw)
			}
			if d.delegatedUpgrades.Load() == before {
				answered++
			} else if len(want.Diagnostics) == 0 && version == 0 {
				t.Errorf("upgrade %d %s: the framework found nothing, yet the fast path handed it on", i, raw)
			}
		}
	}
	if answered < 300 {
		t.Errorf("the fast path answered only %d upgrades", answered)
	}
}
