// Command noopprovider serves the provider's schemas with a server that does no work: every
// validation passes, configuration is accepted as given and a plan is the proposed new state.
// It measures what Terraform, gRPC and the plugin process cost for resources of this schema
// before the provider does anything, which bounds from below what any provider serving these
// schemas can reach in a plan of new resources. `make bench` builds it and runs each plan of
// new resources with it too (bench/findings.md). It is a measuring tool, never a provider to
// apply with.
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/provider"
)

// noop answers the RPCs of a plan of new resources without work; the framework server it
// embeds answers only GetProviderSchema (the schemas themselves) and what a plan never calls.
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

func main() {
	s, err := providerserver.NewProtocol6WithError(provider.New("noop")())()
	if err != nil {
		log.Fatal(err)
	}
	if err := tf6server.Serve("registry.terraform.io/quotaworks/hyperpod", func() tfprotov6.ProviderServer { return noop{s} }); err != nil {
		log.Fatal(err)
	}
}
