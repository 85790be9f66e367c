package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/rpcctx"
)

// NewServer returns the constructor of the provider's protocol server, as main.go serves it and
// the acceptance tests run it: the framework's server, with the validation, plan, read and
// upgrade of the resources Terraform asks about once per instance answered in one pass over
// their schema (fastServer), the schema served with its required-in-block attributes, and
// request contexts released (rpcctx), and the list RPCs of `terraform query` answered by the
// framework (withLists).
func NewServer(version string) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		p := New(version)().(*hyperpodProvider)
		fw, err := providerserver.NewProtocol6WithError(p)()
		if err != nil {
			return nil, err
		}
		return withLists(rpcctx.Wrap(schemaServer{newFastServer(context.Background(), p, fw)}), fw), nil
	}
}

// requiredInBlock are the provider attributes that a block needs whenever it is written, by
// block path and attribute name. The framework's schema declares them Optional: it checks a
// Required attribute of an absent single nested block too, and would refuse every configuration
// without the block (terraform-plugin-framework issue 740). Terraform and OpenTofu check a
// required attribute only in a block that is present, so the schema they are served marks these
// Required, and the CLI refuses a block without one before the provider runs.
var requiredInBlock = []struct {
	block     []string
	attribute string
}{
	{[]string{"exec"}, "command"},
	{[]string{"task_governance"}, "cluster_arn"},
	{[]string{"task_governance", "assume_role"}, "role_arn"},
}

// schemaServer serves the framework's schemas with the requiredInBlock attributes Required.
type schemaServer struct{ tfprotov6.ProviderServer }

func (s schemaServer) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	resp, err := s.ProviderServer.GetProviderSchema(ctx, req)
	if err != nil || resp.Provider == nil {
		return resp, err
	}
	for _, r := range requiredInBlock {
		if a := blockAttribute(resp.Provider.Block, r.block, r.attribute); a != nil {
			a.Optional, a.Required = false, true
		}
	}
	return resp, nil
}

// blockAttribute is the attribute name of the nested block at path below b, or nil.
func blockAttribute(b *tfprotov6.SchemaBlock, path []string, name string) *tfprotov6.SchemaAttribute {
	for _, step := range path {
		var next *tfprotov6.SchemaBlock
		for _, nb := range b.BlockTypes {
			if nb.TypeName == step {
				next = nb.Block
			}
		}
		if next == nil {
			return nil
		}
		b = next
	}
	for _, a := range b.Attributes {
		if a.Name == name {
			return a
		}
	}
	return nil
}
