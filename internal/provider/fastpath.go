package provider

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// fastTypes are the resource types the fast path answers: the ones a workspace holds one of
// per team. fastpath_test.go proves each answer the framework's.
var fastTypes = map[string]bool{"hyperpod_compute_quota": true, "hyperpod_team_namespace": true}

// fastServer answers ValidateResourceConfig, PlanResourceChange, ReadResource and (for a state of
// the schema's version) UpgradeResourceState of fastTypes the way the framework does, without its per-path schema walks (a copy of the schema's
// attribute map per step, several walks per request: most of the provider's CPU in a large
// plan). It hands the framework every request it does not answer exactly:
//   - a resource type it does not serve, or whose schema uses what compileSchema refuses;
//   - a validation or plan with any diagnostic, of the schema checks, validators, plan modifiers
//     or the resource's own ValidateConfig and ModifyPlan (the framework then words the answer);
//   - a destroy, a provider configuration that deferred its resources, a plan the
//     resource deferred, a changed identity, or a private state the plan changed or that is not
//     a JSON object of JSON values (the framework reads those its own way);
//   - a read whose Read deferred or left an identity the framework refuses (it reads again and
//     words the error); a read's own diagnostics are answered here, as Read already ran;
//   - an upgrade from another schema version, or of a state that does not decode;
//   - every other RPC (apply, import, data sources...).
type fastServer struct {
	tfprotov6.ProviderServer
	provider  *hyperpodProvider
	resources map[string]*fastResource

	mu       sync.Mutex
	data     any // the provider's ResourceData since ConfigureProvider
	deferred bool
}

// fastResource is one resource type the fast path serves.
type fastResource struct {
	factory        func() resource.Resource
	schema         schema.Schema
	tfType         tftypes.Type
	nodes          []*fastNode
	identityType   tftypes.Type // nil without an identity
	identitySchema identityschema.Schema
}

func newFastServer(ctx context.Context, p *hyperpodProvider, fw tfprotov6.ProviderServer) *fastServer {
	s := &fastServer{ProviderServer: fw, provider: p, resources: map[string]*fastResource{}}
	// The framework refuses every request while a schema is invalid; so does the fast path. It
	// ignores provider_meta without a schema for it; the fast path serves no provider with one.
	schemas, err := fw.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if _, meta := any(p).(fwprovider.ProviderWithMetaSchema); meta || err != nil || len(schemas.Diagnostics) > 0 {
		return s
	}
	var pm fwprovider.MetadataResponse
	p.Metadata(ctx, fwprovider.MetadataRequest{}, &pm)
	meta := resource.MetadataRequest{ProviderTypeName: pm.TypeName}
	for _, factory := range p.Resources(ctx) {
		r := factory()
		var mr resource.MetadataResponse
		r.Metadata(ctx, meta, &mr)
		if !fastTypes[mr.TypeName] {
			continue
		}
		if fr := compileResource(ctx, factory, r); fr != nil {
			s.resources[mr.TypeName] = fr
		}
	}
	return s
}

// compileResource compiles r's schema; nil when the fast path cannot serve it.
func compileResource(ctx context.Context, factory func() resource.Resource, r resource.Resource) *fastResource {
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	nodes, err := compileSchema(ctx, sr.Schema)
	if err != nil || sr.Diagnostics.HasError() {
		return nil
	}
	fr := &fastResource{factory: factory, schema: sr.Schema, tfType: sr.Schema.Type().TerraformType(ctx), nodes: nodes}
	if ri, ok := r.(resource.ResourceWithIdentity); ok {
		var ir resource.IdentitySchemaResponse
		ri.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &ir)
		fr.identitySchema = ir.IdentitySchema
		fr.identityType = ir.IdentitySchema.Type().TerraformType(ctx)
	}
	return fr
}

// ConfigureProvider configures the framework's server and keeps what its resources receive.
func (s *fastServer) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	resp, err := s.ProviderServer.ConfigureProvider(ctx, req)
	s.mu.Lock()
	defer s.mu.Unlock()
	var deferred bool
	s.data, deferred = s.provider.lastConfigure()
	s.deferred = deferred || err != nil || resp == nil
	return resp, err
}

// resource is a new instance of fr, configured as the framework configures it for a request;
// ok is false when the framework must answer (a deferred provider, a Configure diagnostic).
func (s *fastServer) resource(ctx context.Context, fr *fastResource) (resource.Resource, bool) {
	s.mu.Lock()
	data, deferred := s.data, s.deferred
	s.mu.Unlock()
	r := fr.factory()
	if rc, ok := r.(resource.ResourceWithConfigure); ok {
		var resp resource.ConfigureResponse
		rc.Configure(ctx, resource.ConfigureRequest{ProviderData: data}, &resp)
		if len(resp.Diagnostics) > 0 {
			return nil, false
		}
	}
	return r, !deferred
}

// prepare is what the fast path needs to answer one request for typeName: the compiled
// resource, the request decoded by decode, and a configured resource; ok is false where the
// framework must answer.
func prepare[D any](ctx context.Context, s *fastServer, typeName string, decode func(*fastResource) (D, bool)) (fr *fastResource, d D, r resource.Resource, ok bool) {
	if fr = s.resources[typeName]; fr == nil {
		return nil, d, nil, false
	}
	if d, ok = decode(fr); !ok {
		return nil, d, nil, false
	}
	r, ok = s.resource(ctx, fr)
	return fr, d, r, ok
}

// toProtoPath is a framework path as the protocol writes it.
func toProtoPath(p path.Path) *tftypes.AttributePath {
	out := tftypes.NewAttributePath()
	for _, step := range p.Steps() {
		switch st := step.(type) {
		case path.PathStepAttributeName:
			out = out.WithAttributeName(string(st))
		case path.PathStepElementKeyInt:
			out = out.WithElementKeyInt(int(st))
		case path.PathStepElementKeyString:
			out = out.WithElementKeyString(string(st))
		default:
			return nil // the fast path plans no replacement under a set element
		}
	}
	return out
}

// requiresReplace is the protocol's RequiresReplace: sorted by text and without duplicates,
// as the framework's NormaliseRequiresReplace leaves it; ok is false for a path it cannot write.
func requiresReplace(paths path.Paths) ([]*tftypes.AttributePath, bool) {
	sort.SliceStable(paths, func(i, j int) bool { return paths[i].String() < paths[j].String() })
	var out []*tftypes.AttributePath
	for i, p := range paths {
		if i > 0 && p.Equal(paths[i-1]) {
			continue
		}
		tp := toProtoPath(p)
		if tp == nil {
			return nil, false
		}
		out = append(out, tp)
	}
	return out, true
}

// fastPrivate is a prior private state as the framework reads it: its own keys (starting with
// a dot) and the provider's.
type fastPrivate struct {
	framework, provider map[string][]byte
}

// parsePrivate reads raw as the framework's privatestate.NewData; ok is false where that would
// differ (not a JSON object of JSON values) and the framework must answer.
func parsePrivate(raw []byte) (fastPrivate, bool) {
	p := fastPrivate{framework: map[string][]byte{}, provider: map[string][]byte{}}
	if len(raw) == 0 {
		return p, true
	}
	var all map[string][]byte
	if json.Unmarshal(raw, &all) != nil {
		return p, false
	}
	for k, v := range all {
		if !utf8.Valid(v) || !json.Valid(v) {
			return p, false
		}
		if strings.HasPrefix(k, ".") {
			p.framework[k] = v
		} else {
			p.provider[k] = v
		}
	}
	return p, true
}

// providerData is a new framework ProviderData holding p's keys, in h.Private (the framework
// builds one only in its internal package; its zero value is ready to use).
func (p fastPrivate) providerData(ctx context.Context, h *resource.ModifyPlanResponse) diag.Diagnostics {
	pv := reflect.ValueOf(h).Elem().FieldByName("Private")
	pv.Set(reflect.New(pv.Type().Elem()))
	var diags diag.Diagnostics
	for k, v := range p.provider {
		diags.Append(h.Private.SetKey(ctx, k, v)...)
	}
	return diags
}

// bytes is the private state as the framework writes it back, unchanged.
func (p fastPrivate) bytes() []byte {
	merged := make(map[string][]byte, len(p.framework)+len(p.provider))
	for _, m := range []map[string][]byte{p.framework, p.provider} {
		for k, v := range m {
			if len(v) > 0 {
				merged[k] = v
			}
		}
	}
	if len(merged) == 0 {
		return nil
	}
	out, _ := json.Marshal(merged)
	return out
}
