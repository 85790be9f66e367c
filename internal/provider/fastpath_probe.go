package provider

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The probe: at start, the framework and the fast path answer the same few requests about a
// resource of a provider made for the purpose, whose private state and identity change as the
// provider's resources change theirs. The framework's import writes the import mark (the one
// key of its own in the private state it returns); then both answer a read after that import
// (the mark dropped, the identity changed, keys kept, removed and written), a read of a state
// without identity or private state, and plans with and without a private state; and the fast
// path must hand on a read that writes a key outside privateStateKeys. When an answer differs,
// the framework refuses a request or anything panics, the probe finds no conventions and the
// fast path hands every plan and read to the framework: a framework upgrade that changes its
// private state makes plans and reads slower, never different.

// frameworkServe serves a provider as the framework does: providerserver.NewProtocol6WithError.
type frameworkServe func(fwprovider.Provider) func() (tfprotov6.ProviderServer, error)

const (
	probeTypeName = "fastpathprobe_resource"
	probeID       = "probe"
	// probeOutsideID is the id of a state whose read writes probeOutsideKey, a key outside
	// privateStateKeys.
	probeOutsideID  = "outside"
	probeOutsideKey = "probe_outside"
	// probeLegacyKey is a key outside privateStateKeys that a stored state holds (one an older
	// provider wrote): reads keep it.
	probeLegacyKey = "probe_legacy"
)

// probePrivate is the framework's handling of private state as the probe finds it through
// serve, or nil where the fast path would answer differently.
func probePrivate(ctx context.Context, serve frameworkServe) (found *privateConventions) {
	defer func() {
		if recover() != nil {
			found = nil
		}
	}()
	fw, err := serve(probeProvider{})()
	if err != nil || fw == nil {
		return nil
	}
	imported, c := probeImport(ctx, fw)
	fr := compileResource(ctx, newProbeResource, newProbeResource())
	if c == nil || fr == nil {
		return nil
	}
	fast := &fastServer{ProviderServer: fw, resources: map[string]*fastResource{probeTypeName: fr}, private: c}
	for _, pr := range probeReads(imported) {
		want, err := fw.ReadResource(ctx, pr.req)
		got := fast.read(ctx, pr.req)
		if err != nil || (got != nil) != pr.answered || got != nil && !sameRead(fr, want, got) {
			return nil
		}
	}
	for _, req := range probePlans(imported) {
		want, err := fw.PlanResourceChange(ctx, req)
		if got := fast.plan(ctx, req); err != nil || got == nil || !samePlan(fr, want, got) {
			return nil
		}
	}
	return c
}

// probeImport imports the probe resource through the framework and finds the import mark;
// nil where the private state of the import is not the mark alone.
func probeImport(ctx context.Context, fw tfprotov6.ProviderServer) (*tfprotov6.ImportedResource, *privateConventions) {
	resp, err := fw.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: probeTypeName, ID: probeID})
	if err != nil || len(resp.Diagnostics) > 0 || len(resp.ImportedResources) != 1 {
		return nil, nil
	}
	imported := resp.ImportedResources[0]
	var keys map[string][]byte
	if json.Unmarshal(imported.Private, &keys) != nil || len(keys) != 1 || imported.State == nil || imported.Identity == nil {
		return nil, nil
	}
	for k := range keys {
		c := &privateConventions{importMark: k}
		if p, ok := c.parse(ctx, imported.Private); ok && len(p.framework) == 1 {
			return imported, c
		}
	}
	return nil, nil
}

// probeRead is a read request of the probe, and whether the fast path answers it.
type probeRead struct {
	req      *tfprotov6.ReadResourceRequest
	answered bool
}

// probeKeys is a private state of the provider's keys and of one outside them, plus more.
func probeKeys(more map[string][]byte) []byte {
	keys := map[string][]byte{
		privateStateKeys[0]: []byte(`{"kept":"<&> é"}`), privateStateKeys[1]: []byte(`true`), probeLegacyKey: []byte(`[1]`),
	}
	maps.Copy(keys, more)
	out, _ := json.Marshal(keys) // a map of strings to bytes always encodes
	return out
}

func probeReads(imported *tfprotov6.ImportedResource) []probeRead {
	var marks map[string][]byte
	_ = json.Unmarshal(imported.Private, &marks) // probeImport read it
	outside := probeState(probeOutsideID)
	return []probeRead{
		{&tfprotov6.ReadResourceRequest{TypeName: probeTypeName, CurrentState: imported.State, CurrentIdentity: imported.Identity,
			Private: probeKeys(marks)}, true},
		{&tfprotov6.ReadResourceRequest{TypeName: probeTypeName, CurrentState: imported.State, Private: probeKeys(nil)}, true},
		{&tfprotov6.ReadResourceRequest{TypeName: probeTypeName, CurrentState: imported.State}, true},
		{&tfprotov6.ReadResourceRequest{TypeName: probeTypeName, CurrentState: &outside, Private: probeKeys(nil)}, false},
	}
}

func probePlans(imported *tfprotov6.ImportedResource) []*tfprotov6.PlanResourceChangeRequest {
	var marks map[string][]byte
	_ = json.Unmarshal(imported.Private, &marks) // probeImport read it
	state, none := probeState(probeID), probeState("")
	return []*tfprotov6.PlanResourceChangeRequest{
		{TypeName: probeTypeName, PriorState: &state, ProposedNewState: &state, Config: &state, PriorIdentity: imported.Identity,
			PriorPrivate: probeKeys(marks)},
		{TypeName: probeTypeName, PriorState: &none, ProposedNewState: &state, Config: &state},
	}
}

// probeState is the probe resource's state of id; a null state without one.
func probeState(id string) tfprotov6.DynamicValue {
	v := tftypes.NewValue(probeObjectType, nil)
	if id != "" {
		v = tftypes.NewValue(probeObjectType, map[string]tftypes.Value{"id": tftypes.NewValue(tftypes.String, id)})
	}
	dv, _ := tfprotov6.NewDynamicValue(probeObjectType, v) // a value of its own type always encodes
	return dv
}

var probeObjectType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{"id": tftypes.String}}

// sameRead reports whether two answers to a read are the same, without diagnostics.
func sameRead(fr *fastResource, a, b *tfprotov6.ReadResourceResponse) bool {
	return len(a.Diagnostics) == 0 && len(b.Diagnostics) == 0 && a.Deferred == nil && b.Deferred == nil &&
		string(a.Private) == string(b.Private) && sameDynamic(fr.tfType, a.NewState, b.NewState) &&
		sameIdentity(fr, a.NewIdentity, b.NewIdentity)
}

// samePlan reports whether two answers to a plan are the same, without diagnostics.
func samePlan(fr *fastResource, a, b *tfprotov6.PlanResourceChangeResponse) bool {
	return len(a.Diagnostics) == 0 && len(b.Diagnostics) == 0 && a.Deferred == nil && b.Deferred == nil &&
		len(a.RequiresReplace) == 0 && len(b.RequiresReplace) == 0 && string(a.PlannedPrivate) == string(b.PlannedPrivate) &&
		sameDynamic(fr.tfType, a.PlannedState, b.PlannedState) && sameIdentity(fr, a.PlannedIdentity, b.PlannedIdentity)
}

func sameIdentity(fr *fastResource, a, b *tfprotov6.ResourceIdentityData) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameDynamic(fr.identityType, a.IdentityData, b.IdentityData)
}

// sameDynamic reports whether a and b hold the same value of type t. Their bytes may differ:
// msgpack writes a map's keys in Go's map order.
func sameDynamic(t tftypes.Type, a, b *tfprotov6.DynamicValue) bool {
	if a == nil || b == nil {
		return a == b
	}
	va, err1 := a.Unmarshal(t)
	vb, err2 := b.Unmarshal(t)
	return err1 == nil && err2 == nil && va.Equal(vb)
}

// probeProvider serves the probe resource alone.
type probeProvider struct{}

func (probeProvider) Metadata(_ context.Context, _ fwprovider.MetadataRequest, resp *fwprovider.MetadataResponse) {
	resp.TypeName = "fastpathprobe"
}

func (probeProvider) Schema(context.Context, fwprovider.SchemaRequest, *fwprovider.SchemaResponse) {}

func (probeProvider) Configure(context.Context, fwprovider.ConfigureRequest, *fwprovider.ConfigureResponse) {
}

func (probeProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newProbeResource}
}

func (probeProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// probeResource has an id, the same identity, and a read that changes private state and
// identity as the provider's resources do.
type probeResource struct{}

func newProbeResource() resource.Resource { return probeResource{} }

func (probeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_resource"
}

func (probeResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{"id": schema.StringAttribute{Required: true}}}
}

func (probeResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"id": identityschema.StringAttribute{RequiredForImport: true}}}
}

func (probeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
	resp.Diagnostics.Append(resp.Identity.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

// Read keeps privateStateKeys[0] and probeLegacyKey, removes privateStateKeys[1], writes
// privateStateKeys[2] (and probeOutsideKey for probeOutsideID) and sets the identity to the id
// read: another than the import's.
func (probeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateStateKeys[1], nil)...)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateStateKeys[2], []byte(`{"read":"`+id.ValueString()+`"}`))...)
	if id.ValueString() == probeOutsideID {
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, probeOutsideKey, []byte(`true`))...)
	}
	resp.Diagnostics.Append(resp.Identity.SetAttribute(ctx, path.Root("id"), id.ValueString()+" read")...)
}

func (probeResource) Create(context.Context, resource.CreateRequest, *resource.CreateResponse) {}

func (probeResource) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {}

func (probeResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
