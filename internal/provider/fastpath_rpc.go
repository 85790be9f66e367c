package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ValidateResourceConfig answers as the framework's ValidateResourceConfig: the resource's
// config validators and ValidateConfig, then the schema's checks and validators. Any
// diagnostic sends the request to the framework, which words it.
func (s *fastServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	if s.validate(ctx, req) {
		return &tfprotov6.ValidateResourceConfigResponse{}, nil
	}
	return s.ProviderServer.ValidateResourceConfig(ctx, req)
}

// validate reports whether the configuration is valid without a diagnostic.
func (s *fastServer) validate(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) bool {
	fr := s.resources[req.TypeName]
	if fr == nil || req.Config == nil {
		return false
	}
	raw, err := req.Config.Unmarshal(fr.tfType)
	if err != nil {
		return false
	}
	r, ok := s.resource(ctx, fr)
	if !ok {
		return false
	}
	var caps resource.ValidateConfigClientCapabilities
	if req.ClientCapabilities != nil {
		caps.WriteOnlyAttributesAllowed = req.ClientCapabilities.WriteOnlyAttributesAllowed
	}
	v := &fastValidation{config: tfsdk.Config{Raw: raw, Schema: fr.schema},
		caps: validator.ValidateSchemaClientCapabilities{WriteOnlyAttributesAllowed: caps.WriteOnlyAttributesAllowed}}
	vreq := resource.ValidateConfigRequest{ClientCapabilities: caps, Config: v.config}
	if rv, ok := r.(resource.ResourceWithConfigValidators); ok {
		for _, cv := range rv.ConfigValidators(ctx) {
			var resp resource.ValidateConfigResponse
			cv.ValidateResource(ctx, vreq, &resp)
			v.diags.Append(resp.Diagnostics...)
		}
	}
	if rv, ok := r.(resource.ResourceWithValidateConfig); ok {
		var resp resource.ValidateConfigResponse
		rv.ValidateConfig(ctx, vreq, &resp)
		v.diags.Append(resp.Diagnostics...)
	}
	v.object(ctx, fr.nodes, raw, path.Empty())
	return len(v.diags) == 0
}

// PlanResourceChange answers as the framework's PlanResourceChange, for a create or an update
// whose plan raises no diagnostic; the framework answers every other plan.
func (s *fastServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if resp := s.plan(ctx, req); resp != nil {
		return resp, nil
	}
	return s.ProviderServer.PlanResourceChange(ctx, req)
}

// planRequest is a plan request's values, decoded.
type planRequest struct {
	config, proposed, prior tftypes.Value
	identity                *tfsdk.ResourceIdentity
	private                 fastPrivate
}

// decodePlan decodes req for fr; ok is false where the framework must answer (a destroy, a
// private state parse refuses).
func decodePlan(ctx context.Context, c *privateConventions, fr *fastResource, req *tfprotov6.PlanResourceChangeRequest) (d planRequest, ok bool) {
	values := [3]tftypes.Value{}
	for i, dv := range []*tfprotov6.DynamicValue{req.Config, req.ProposedNewState, req.PriorState} {
		values[i] = tftypes.NewValue(fr.tfType, nil)
		if dv == nil {
			continue
		}
		v, err := dv.Unmarshal(fr.tfType)
		if err != nil {
			return d, false
		}
		values[i] = v
	}
	d.config, d.proposed, d.prior = values[0], values[1], values[2]
	if d.proposed.IsNull() {
		return d, false
	}
	if fr.identityType != nil {
		raw := tftypes.NewValue(fr.identityType, nil)
		if req.PriorIdentity != nil && req.PriorIdentity.IdentityData != nil {
			v, err := req.PriorIdentity.IdentityData.Unmarshal(fr.identityType)
			if err != nil {
				return d, false
			}
			raw = v
		}
		d.identity = &tfsdk.ResourceIdentity{Raw: raw, Schema: fr.identitySchema}
	}
	d.private, ok = c.parse(ctx, req.PriorPrivate)
	return d, ok
}

// plan is the framework's answer to req, or nil where the framework must answer.
func (s *fastServer) plan(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) *tfprotov6.PlanResourceChangeResponse {
	fr, d, r, ok := prepare(ctx, s, req.TypeName, func(fr *fastResource) (planRequest, bool) { return decodePlan(ctx, s.private, fr, req) })
	if !ok {
		return nil
	}
	pl := &fastPlanning{}
	pl.diags.Append(setPrivate(ctx, &pl.private.Private, d.private.provider)...)
	readConfig(ctx, fr.nodes, d.proposed, d.config, path.Empty(), &pl.diags)
	planned := applyDefaults(ctx, fr.nodes, d.proposed, d.config, &pl.diags)
	if !planned.Equal(d.prior) {
		planned = markUnknown(fr.nodes, planned, d.config)
	}
	pl.req = resource.ModifyPlanRequest{
		Config:  tfsdk.Config{Raw: d.config, Schema: fr.schema},
		Plan:    tfsdk.Plan{Raw: planned, Schema: fr.schema},
		State:   tfsdk.State{Raw: d.prior, Schema: fr.schema},
		Private: pl.private.Private,
	}
	if len(pl.diags) > 0 {
		return nil
	}
	planned = pl.root(ctx, fr.nodes)
	if len(pl.diags) > 0 {
		return nil
	}
	return s.modifyPlan(ctx, fr, r, req, d, pl, planned)
}

// modifyPlan runs the resource's ModifyPlan on planned and encodes the answer.
func (s *fastServer) modifyPlan(ctx context.Context, fr *fastResource, r resource.Resource, req *tfprotov6.PlanResourceChangeRequest,
	d planRequest, pl *fastPlanning, planned tftypes.Value) *tfprotov6.PlanResourceChangeResponse {
	mreq := pl.req
	mreq.Plan.Raw = planned
	mreq.Private = pl.private.Private
	if req.ClientCapabilities != nil {
		mreq.ClientCapabilities.DeferralAllowed = req.ClientCapabilities.DeferralAllowed
	}
	mresp := resource.ModifyPlanResponse{Plan: mreq.Plan, Private: mreq.Private}
	if d.identity != nil {
		reqID, respID := *d.identity, *d.identity
		mreq.Identity, mresp.Identity = &reqID, &respID
	}
	if rm, ok := r.(resource.ResourceWithModifyPlan); ok {
		rm.ModifyPlan(ctx, mreq, &mresp)
	}
	// The private state the plan returns is the prior one, unless something changed it.
	if len(mresp.Diagnostics) > 0 || mresp.Deferred != nil || !privateHoldsExactly(ctx, mresp.Private, d.private.provider) ||
		d.identity != nil && (mresp.Identity == nil || !mresp.Identity.Raw.Equal(d.identity.Raw)) {
		return nil
	}
	return encodePlan(fr, mresp, pl.replace, d)
}

// encodePlan writes the answer as the framework's toproto6 does; nil where it cannot.
func encodePlan(fr *fastResource, mresp resource.ModifyPlanResponse, replace path.Paths, d planRequest) *tfprotov6.PlanResourceChangeResponse {
	state, err := tfprotov6.NewDynamicValue(fr.tfType, mresp.Plan.Raw)
	if err != nil {
		return nil
	}
	paths, ok := requiresReplace(append(replace, mresp.RequiresReplace...))
	if !ok {
		return nil
	}
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedState: &state, RequiresReplace: paths, PlannedPrivate: d.private.bytes()}
	if d.identity != nil {
		id, err := tfprotov6.NewDynamicValue(fr.identityType, d.identity.Raw)
		if err != nil {
			return nil
		}
		resp.PlannedIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &id}
	}
	return resp
}
