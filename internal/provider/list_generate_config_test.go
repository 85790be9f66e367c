package provider

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// TestConfigGeneratorAnswersAsTheFramework requires the compiled generation of a compute quota's
// configuration to equal the framework's GenerateResourceConfig, on seeded states that set or
// leave null every attribute, with empty and non-empty strings.
func TestConfigGeneratorAnswersAsTheFramework(t *testing.T) {
	fw, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	g := quotaConfigGenerator()
	rng := rand.New(rand.NewPCG(1, 2))
	changed := 0
	for i := range 300 {
		state := randomValue(rng, quotaType(), 0)
		dv, err := tfprotov6.NewDynamicValue(quotaType(), state)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := g.generate(&dv)
		if !ok {
			t.Fatalf("state %d: the generator handed a compute quota's state to the framework:\n%s", i, state)
		}
		resp, err := fw.GenerateResourceConfig(context.Background(), &tfprotov6.GenerateResourceConfigRequest{TypeName: quotaResourceKind, State: &dv})
		if err != nil || len(resp.Diagnostics) > 0 || resp.Config == nil {
			t.Fatalf("state %d: the framework answered %v, %+v", i, err, resp)
		}
		want, err := resp.Config.Unmarshal(quotaType())
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Fatalf("state %d:\n%s\ngenerated\n%s\nthe framework generates\n%s", i, state, got, want)
		}
		if !want.Equal(state) {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no state's configuration differs from the state: the states exercise none of the framework's rules")
	}
}

// randomValue is a value of type ty, null at random below the root (depth > 0).
func randomValue(rng *rand.Rand, ty tftypes.Type, depth int) tftypes.Value {
	if depth > 0 && rng.IntN(4) == 0 {
		return tftypes.NewValue(ty, nil)
	}
	switch {
	case ty.Is(tftypes.String):
		return tftypes.NewValue(ty, []string{"", "a", "ml.g5.12xlarge"}[rng.IntN(3)])
	case ty.Is(tftypes.Number):
		return tftypes.NewValue(ty, big.NewFloat(float64(rng.IntN(5))))
	case ty.Is(tftypes.Bool):
		return tftypes.NewValue(ty, rng.IntN(2) == 0)
	case ty.Is(tftypes.Object{}):
		o := ty.(tftypes.Object)
		attrs := map[string]tftypes.Value{}
		for name, at := range o.AttributeTypes {
			attrs[name] = randomValue(rng, at, depth+1)
		}
		return tftypes.NewValue(ty, attrs)
	case ty.Is(tftypes.List{}):
		var elems []tftypes.Value
		for range rng.IntN(3) {
			elems = append(elems, randomValue(rng, ty.(tftypes.List).ElementType, depth+1))
		}
		return tftypes.NewValue(ty, elems)
	case ty.Is(tftypes.Map{}):
		elems := map[string]tftypes.Value{}
		for i := range rng.IntN(3) {
			elems[fmt.Sprint("k", i)] = randomValue(rng, ty.(tftypes.Map).ElementType, depth+1)
		}
		return tftypes.NewValue(ty, elems)
	}
	panic(fmt.Sprintf("randomValue: type %s", ty))
}
