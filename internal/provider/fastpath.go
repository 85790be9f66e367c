package provider

import (
	"context"
	"sort"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/path"
	fwprovider "github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
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
//   - a read whose Read deferred, left an identity the framework refuses (the framework reads
//     again and words the error) or wrote a private key outside privateStateKeys (which only
//     the framework can write back); a read's own diagnostics are answered here, as Read
//     already ran;
//   - a plan or read with a private key of the framework's other than the import mark, and
//     every plan and read when the probe at start found the framework's private state not as
//     the fast path handles it (fastpath_probe.go);
//   - an upgrade from another schema version, or of a state that does not decode;
//   - every other RPC (apply, import, data sources...).
type fastServer struct {
	tfprotov6.ProviderServer
	provider  *hyperpodProvider
	resources map[string]*fastResource
	// private is the framework's handling of private state that the probe found; nil when
	// plans and reads must go to the framework.
	private *privateConventions

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

// newFastServer is the fast path over fw, the framework's server of p.
func newFastServer(ctx context.Context, p *hyperpodProvider, fw tfprotov6.ProviderServer) *fastServer {
	return newProbedFastServer(ctx, p, fw, providerserver.NewProtocol6WithError)
}

// newProbedFastServer is newFastServer with the probe's provider served by serve, in tests one
// that simulates a changed framework.
func newProbedFastServer(ctx context.Context, p *hyperpodProvider, fw tfprotov6.ProviderServer, serve frameworkServe) *fastServer {
	s := &fastServer{ProviderServer: fw, provider: p, resources: map[string]*fastResource{}, private: probePrivate(ctx, serve)}
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
