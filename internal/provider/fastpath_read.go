package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ReadResource answers as the framework's ReadResource for fastTypes: the resource's Read on
// the decoded state, its answer encoded, without the framework's two walks over the state
// (NullifyCollectionBlocks on the way in, ReifyNullCollectionBlocks on the way out: no-ops for
// schemas without list or set blocks, which compileSchema refuses). Read calls the API, so
// whether the fast path answers is decided before it runs; only a framework check after Read
// that fails (an identity that changed or is missing, a deferral) sends the request to the
// framework, which reads again.
func (s *fastServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if resp := s.read(ctx, req); resp != nil {
		return resp, nil
	}
	return s.ProviderServer.ReadResource(ctx, req)
}

// readRequest is a read request's values, decoded.
type readRequest struct {
	state    tftypes.Value
	identity *tfsdk.ResourceIdentity
	private  fastPrivate
	// afterImport says whether an import wrote the state (the import mark, which the read
	// drops; the read may then change the identity).
	afterImport bool
}

func decodeRead(ctx context.Context, c *privateConventions, fr *fastResource, req *tfprotov6.ReadResourceRequest) (d readRequest, ok bool) {
	if req.CurrentState == nil {
		return d, false
	}
	state, err := req.CurrentState.Unmarshal(fr.tfType)
	if err != nil {
		return d, false
	}
	d.state = state
	if fr.identityType != nil {
		raw := tftypes.NewValue(fr.identityType, nil)
		if req.CurrentIdentity != nil && req.CurrentIdentity.IdentityData != nil {
			if raw, err = req.CurrentIdentity.IdentityData.Unmarshal(fr.identityType); err != nil {
				return d, false
			}
		}
		d.identity = &tfsdk.ResourceIdentity{Raw: raw, Schema: fr.identitySchema}
	}
	if d.private, ok = c.parse(ctx, req.Private); !ok {
		return d, false
	}
	if _, d.afterImport = d.private.framework[c.importMark]; d.afterImport {
		delete(d.private.framework, c.importMark)
	}
	return d, true
}

// read is the framework's answer to req, or nil where the framework must answer.
func (s *fastServer) read(ctx context.Context, req *tfprotov6.ReadResourceRequest) *tfprotov6.ReadResourceResponse {
	fr, d, r, ok := prepare(ctx, s, req.TypeName, func(fr *fastResource) (readRequest, bool) { return decodeRead(ctx, s.private, fr, req) })
	if !ok {
		return nil
	}
	rreq := resource.ReadRequest{State: tfsdk.State{Raw: d.state, Schema: fr.schema}}
	if req.ClientCapabilities != nil {
		rreq.ClientCapabilities.DeferralAllowed = req.ClientCapabilities.DeferralAllowed
	}
	if diags := setPrivate(ctx, &rreq.Private, d.private.provider); len(diags) > 0 {
		return nil
	}
	rresp := resource.ReadResponse{State: rreq.State, Private: rreq.Private} // one private state, as the framework passes it
	if d.identity != nil {
		reqID, respID := *d.identity, *d.identity
		rreq.Identity, rresp.Identity = &reqID, &respID
	}
	r.Read(ctx, rreq, &rresp)
	if rresp.Deferred != nil || !rresp.Diagnostics.HasError() && !identityKept(d, rresp.Identity) {
		return nil // the framework answers these with its own errors, after a Read of its own
	}
	return encodeRead(ctx, fr, d, rresp)
}

// identityKept reports whether Read left an identity the framework accepts: one, not null, and
// unchanged unless the state was just imported or had none.
func identityKept(d readRequest, id *tfsdk.ResourceIdentity) bool {
	if d.identity == nil {
		return id == nil
	}
	if id == nil || id.Raw.IsFullyNull() {
		return false
	}
	return d.afterImport || d.identity.Raw.IsFullyNull() || d.identity.Raw.Equal(id.Raw)
}

// encodeRead writes the answer as the framework's toproto6 does; nil where it cannot.
func encodeRead(ctx context.Context, fr *fastResource, d readRequest, rresp resource.ReadResponse) *tfprotov6.ReadResourceResponse {
	resp := &tfprotov6.ReadResourceResponse{Diagnostics: protoDiagnostics(rresp.Diagnostics)}
	state, err := tfprotov6.NewDynamicValue(fr.tfType, rresp.State.Raw)
	if err != nil {
		return nil
	}
	resp.NewState = &state
	if rresp.Identity != nil {
		id, err := tfprotov6.NewDynamicValue(fr.identityType, rresp.Identity.Raw)
		if err != nil {
			return nil
		}
		resp.NewIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &id}
	}
	keys, ok := privateKeysOf(ctx, rresp.Private, d.private.provider)
	if !ok {
		return nil
	}
	resp.Private = fastPrivate{framework: d.private.framework, provider: keys}.bytes()
	return resp
}

// protoDiagnostics are diagnostics as the framework's toproto6 writes them.
func protoDiagnostics(diags diag.Diagnostics) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		pd := &tfprotov6.Diagnostic{Summary: d.Summary(), Detail: d.Detail(), Severity: tfprotov6.DiagnosticSeverityInvalid}
		switch d.Severity() {
		case diag.SeverityError:
			pd.Severity = tfprotov6.DiagnosticSeverityError
		case diag.SeverityWarning:
			pd.Severity = tfprotov6.DiagnosticSeverityWarning
		}
		if dp, ok := d.(diag.DiagnosticWithPath); ok {
			pd.Attribute = toProtoPath(dp.Path())
		}
		out = append(out, pd)
	}
	return out
}

// UpgradeResourceState answers as the framework's UpgradeResourceState for fastTypes when the
// stored state has the schema's version: the state decoded from its JSON (attributes the schema
// no longer has are skipped) and encoded again, without the framework's walk over it on the way
// out. Another version, or a state that does not decode, goes to the framework.
func (s *fastServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if fr := s.resources[req.TypeName]; fr != nil && req.RawState != nil && req.Version == fr.schema.Version {
		v, err := req.RawState.UnmarshalWithOpts(fr.tfType, tfprotov6.UnmarshalOpts{
			ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
		})
		if err == nil {
			if state, err := tfprotov6.NewDynamicValue(fr.tfType, v); err == nil {
				return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &state}, nil
			}
		}
	}
	return s.ProviderServer.UpgradeResourceState(ctx, req)
}
