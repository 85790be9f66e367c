// Command noopprovider serves the provider's schemas with a server that does no work: every
// validation passes, configuration is accepted as given, a refresh finds each object as the
// state has it and a plan is the proposed new state. It measures what Terraform, gRPC and the
// plugin process cost for resources of this schema before the provider does anything, which
// bounds from below what any provider serving these schemas can reach in a plan of new
// resources and, against an existing state, in a no-op plan or a refresh. `make bench` builds
// it and runs each plan of new resources with it too (bench/findings.md). It is a measuring
// tool, never a provider to apply with.
package main

import (
	"context"
	"log"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/provider"
)

// noop answers the RPCs of a plan and a refresh without work; the framework server it embeds
// answers only GetProviderSchema (the schemas themselves) and what a plan never calls.
type noop struct{ tfprotov6.ProviderServer }

func (noop) ValidateProviderConfig(_ context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return &tfprotov6.ValidateProviderConfigResponse{PreparedConfig: req.Config}, nil
}

func (noop) ConfigureProvider(context.Context, *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return &tfprotov6.ConfigureProviderResponse{}, nil
}

func (noop) ValidateResourceConfig(context.Context, *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return &tfprotov6.ValidateResourceConfigResponse{}, nil
}

func (noop) PlanResourceChange(_ context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState}, nil
}

// UpgradeResourceState decodes the stored state, which every provider must do to answer it.
func (n noop) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	all, err := resourceTypes(ctx, n.ProviderServer)
	if err != nil {
		return nil, err
	}
	typ := all[req.TypeName]
	v, err := req.RawState.UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{})
	if err != nil {
		return nil, err
	}
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		return nil, err
	}
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &dv}, nil
}

// resourceTypes are the value types of the resources' schemas, worked out on first use.
func resourceTypes(ctx context.Context, s tfprotov6.ProviderServer) (map[string]tftypes.Type, error) {
	typesOnce.Do(func() {
		var schemas *tfprotov6.GetProviderSchemaResponse
		if schemas, typesErr = s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); typesErr != nil {
			return
		}
		types = map[string]tftypes.Type{}
		for name, sch := range schemas.ResourceSchemas {
			types[name] = sch.ValueType()
		}
	})
	return types, typesErr
}

var (
	typesOnce sync.Once
	types     map[string]tftypes.Type
	typesErr  error
)

// ReadResource finds the object as the state has it.
func (noop) ReadResource(_ context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}, nil
}

func main() {
	s, err := provider.NewServer("noop")()
	if err != nil {
		log.Fatal(err)
	}
	if err := tf6server.Serve("registry.terraform.io/quotaworks/hyperpod", func() tfprotov6.ProviderServer { return noop{s} }); err != nil {
		log.Fatal(err)
	}
}
