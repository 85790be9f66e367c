package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The attributes a provider block needs whenever it is written are served Required, and only
// they: everything else in their blocks stays Optional.
func TestServedSchemaRequiresAttributesInTheirBlocks(t *testing.T) {
	s, err := NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("GetProviderSchema: %v %v", err, resp.Diagnostics)
	}
	want := map[string]bool{"exec.command": true, "task_governance.cluster_arn": true, "task_governance.assume_role.role_arn": true}
	var walk func(prefix string, b *tfprotov6.SchemaBlock)
	walk = func(prefix string, b *tfprotov6.SchemaBlock) {
		for _, a := range b.Attributes {
			name := prefix + a.Name
			if a.Required != want[name] || a.Required == a.Optional && !a.Computed {
				t.Errorf("%s: Required %v, Optional %v; want Required %v", name, a.Required, a.Optional, want[name])
			}
			delete(want, name)
		}
		for _, nb := range b.BlockTypes {
			walk(prefix+nb.TypeName+".", nb.Block)
		}
	}
	walk("", resp.Provider.Block)
	for name := range want {
		t.Errorf("%s: not in the served schema", name)
	}
}
