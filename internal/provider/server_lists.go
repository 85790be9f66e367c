package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// listServer is the provider's server with the list RPCs of `terraform query` answered by the
// framework's server itself, and the configuration Terraform generates from a listed or imported
// compute quota made valid (GenerateResourceConfig). The servers around it (fastServer, schemaServer, rpcctx's) embed
// tfprotov6.ProviderServer, which does not carry the list RPCs (tfprotov6.ListResourceServer), so
// through them Terraform would find no list support; and none of them has anything to do for a
// list. A list's results are read from its stream after ListResource returns, with the request's
// context: rpcctx, which detaches a request's context once the method returns, would cut it off.
type listServer struct {
	tfprotov6.ProviderServer
	lists tfprotov6.ListResourceServer
}

// withLists is s with the list RPCs of fw, the framework's server; s when fw has none.
func withLists(s, fw tfprotov6.ProviderServer) tfprotov6.ProviderServer {
	lists, ok := fw.(tfprotov6.ListResourceServer)
	if !ok {
		return s
	}
	return listServer{ProviderServer: s, lists: lists}
}

func (s listServer) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	return s.lists.ValidateListResourceConfig(ctx, req)
}

func (s listServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	return s.lists.ListResource(ctx, req)
}

// GetProviderSchema and GetMetadata announce GenerateResourceConfig, which the framework answers
// but does not announce (v1.19.0 leaves the capability out of its answer): without it
// Terraform generates the configuration itself, the way the framework does, with no room for
// the compute quota's correction below.
func (s listServer) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	resp, err := s.ProviderServer.GetProviderSchema(ctx, req)
	if resp != nil {
		resp.ServerCapabilities = generatesConfig(resp.ServerCapabilities)
	}
	return resp, err
}

func (s listServer) GetMetadata(ctx context.Context, req *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	resp, err := s.ProviderServer.GetMetadata(ctx, req)
	if resp != nil {
		resp.ServerCapabilities = generatesConfig(resp.ServerCapabilities)
	}
	return resp, err
}

// generatesConfig is c with GenerateResourceConfig announced.
func generatesConfig(c *tfprotov6.ServerCapabilities) *tfprotov6.ServerCapabilities {
	if c == nil {
		c = &tfprotov6.ServerCapabilities{}
	}
	c.GenerateResourceConfig = true
	return c
}

// GenerateResourceConfig is the framework's configuration of a state (every attribute the
// configuration may set, as the state holds it) with, for a compute quota, accelerators left out
// of each resources entry sized by count or accelerator_partition: the state holds the
// accelerators these imply as computed, and a configuration may not set them beside either
// (quota's validation refuses it), so a configuration with them would not apply. Left out, they
// plan to the value the state holds. The framework's configuration of a compute quota comes from
// the rules compiled from its schema (configGenerator), as the framework would answer; what they
// do not decide goes to the framework.
func (s listServer) GenerateResourceConfig(ctx context.Context, req *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	if req.TypeName == quotaResourceKind {
		if config, ok := quotaConfigGenerator().generate(req.State); ok {
			if generated, err := tfprotov6.NewDynamicValue(quotaType(), withoutImpliedAccelerators(config)); err == nil {
				return &tfprotov6.GenerateResourceConfigResponse{Config: &generated}, nil
			}
		}
	}
	resp, err := s.ProviderServer.GenerateResourceConfig(ctx, req)
	if err != nil || resp == nil || resp.Config == nil || req.TypeName != quotaResourceKind {
		return resp, err
	}
	config, err := resp.Config.Unmarshal(quotaType())
	if err != nil {
		return resp, nil // the framework's answer stands; Terraform reports what does not validate
	}
	generated, err := tfprotov6.NewDynamicValue(quotaType(), withoutImpliedAccelerators(config))
	if err != nil {
		return resp, nil
	}
	resp.Config = &generated
	return resp, nil
}

// withoutImpliedAccelerators is a compute quota's configuration with accelerators left out of
// each resources entry sized by count or accelerator_partition.
func withoutImpliedAccelerators(config tftypes.Value) tftypes.Value {
	out, err := tftypes.Transform(config, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		steps := p.Steps()
		if len(steps) != 2 || steps[0] != tftypes.AttributeName(tagOf[computeQuotaModel]("Resources")) || v.IsNull() || !v.IsKnown() {
			return v, nil
		}
		var entry map[string]tftypes.Value
		if err := v.As(&entry); err != nil {
			return v, nil
		}
		count, partition := entry[tagOf[resourceEntryModel]("Count")], entry[tagOf[resourceEntryModel]("Partition")]
		accelerators := tagOf[resourceEntryModel]("Accelerators")
		if (count.IsNull() && partition.IsNull()) || entry[accelerators].IsNull() {
			return v, nil
		}
		entry[accelerators] = tftypes.NewValue(entry[accelerators].Type(), nil)
		return tftypes.NewValue(v.Type(), entry), nil
	})
	if err != nil {
		return config
	}
	return out
}

// quotaConfigGenerator generates a compute quota's configuration as the framework does.
var quotaConfigGenerator = sync.OnceValue(func() *configGenerator {
	var sr resource.SchemaResponse
	(&computeQuotaResource{}).Schema(context.Background(), resource.SchemaRequest{}, &sr)
	return newConfigGenerator(sr.Schema)
})

// quotaType is the Terraform type of hyperpod_compute_quota's values.
var quotaType = sync.OnceValue(func() tftypes.Type {
	var sr resource.SchemaResponse
	(&computeQuotaResource{}).Schema(context.Background(), resource.SchemaRequest{}, &sr)
	return sr.Schema.Type().TerraformType(context.Background())
})

// tf6server serves the list RPCs of a server that is a ProviderServer and a ListResourceServer.
var _ tfprotov6.ListResourceServer = listServer{}
