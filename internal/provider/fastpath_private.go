package provider

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// Private state on the fast path, through the framework's public API only. Terraform sends and
// receives it as bytes; resources read and write it as the framework's *privatestate.ProviderData,
// a type of an internal package that the fast path never names: generic type inference takes it
// from the fields that hold it (such as resource.ReadRequest.Private), and GetKey reads back the
// keys a resource may have written (privateStateKeys). What only the framework knows (which keys
// are its own, the key an import writes, how it writes the bytes) is asked of the framework or
// checked against it at start (fastpath_probe.go); where it differs, plans and reads go to the
// framework.

// privateStateKeys are all the keys the provider's resources write to private state
// (resource_common.go). A read that writes another goes to the framework, which reads again.
var privateStateKeys = []string{privateConflict, privateTakeover, privateUsage, privateUnnamed, privateTerminating}

// privateData is the framework's private state type as the fast path uses it: P is
// *privatestate.ProviderData, and E the type it points to, whose zero value is an empty private
// state (the probe checks it).
type privateData[E any, P any] interface {
	*E
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
	Equal(other P) bool
}

// setPrivate sets *dst to a new private state of the framework's type holding keys; the
// diagnostics are SetKey's.
func setPrivate[E any, P privateData[E, P]](ctx context.Context, dst *P, keys map[string][]byte) diag.Diagnostics {
	pd := P(new(E))
	var diags diag.Diagnostics
	for k, v := range keys {
		diags.Append(pd.SetKey(ctx, k, v)...)
	}
	*dst = pd
	return diags
}

// privateKeysOf are the keys pd holds: privateStateKeys and those of prior, the keys it was
// given, read with GetKey. ok is false when pd is nil or holds any other key.
func privateKeysOf[E any, P privateData[E, P]](ctx context.Context, pd P, prior map[string][]byte) (_ map[string][]byte, ok bool) {
	if pd == nil {
		return nil, false
	}
	out := map[string][]byte{}
	read := func(k string) bool {
		v, diags := pd.GetKey(ctx, k)
		if len(v) > 0 {
			out[k] = v
		}
		return !diags.HasError()
	}
	for _, k := range privateStateKeys {
		if !read(k) {
			return nil, false
		}
	}
	for k := range prior {
		if !read(k) {
			return nil, false
		}
	}
	return out, privateHoldsExactly(ctx, pd, out)
}

// privateHoldsExactly reports whether pd holds keys and no other key. Equal compares whole private
// states, and tells one never written from one whose keys were all removed: both are tried.
func privateHoldsExactly[E any, P privateData[E, P]](ctx context.Context, pd P, keys map[string][]byte) bool {
	if pd == nil {
		return false
	}
	emptied := make(map[string][]byte, len(privateStateKeys)+len(keys))
	for _, k := range privateStateKeys {
		emptied[k] = nil // SetKey of nothing removes the key
	}
	for k, v := range keys {
		emptied[k] = v
	}
	var written, removed P
	if len(setPrivate(ctx, &written, keys)) > 0 || len(setPrivate(ctx, &removed, emptied)) > 0 {
		return false
	}
	return pd.Equal(written) || pd.Equal(removed)
}

// privateConventions is what the probe found of the framework's private state: the fast path
// reproduces it, and a nil *privateConventions sends every plan and read to the framework.
type privateConventions struct {
	// importMark is the key of the framework's own that its ImportResourceState writes and its
	// next ReadResource drops: a state an import wrote that no read has seen.
	importMark string
}

// fastPrivate is a request's private state as the framework reads it: its own keys (at most
// the import mark) and the provider's.
type fastPrivate struct {
	framework, provider map[string][]byte
}

// parse reads raw as the framework's privatestate.NewData does; ok is false where the framework
// must answer: raw is not a JSON object of UTF-8 JSON values, it holds a key of the framework's
// other than the import mark, or c is nil. A key is the framework's when SetKey refuses it: the
// values were checked already, so what is left to refuse is a key reserved for the framework.
func (c *privateConventions) parse(ctx context.Context, raw []byte) (fastPrivate, bool) {
	p := fastPrivate{framework: map[string][]byte{}, provider: map[string][]byte{}}
	if c == nil {
		return p, false
	}
	if len(raw) == 0 {
		return p, true
	}
	var all map[string][]byte
	if json.Unmarshal(raw, &all) != nil {
		return p, false
	}
	var scratch resource.ReadRequest // a place of the framework's private state type
	setPrivate(ctx, &scratch.Private, nil)
	for k, v := range all {
		if !utf8.Valid(v) || !json.Valid(v) {
			return p, false
		}
		switch {
		case !scratch.Private.SetKey(ctx, k, v).HasError():
			p.provider[k] = v
		case k == c.importMark:
			p.framework[k] = v
		default:
			return p, false
		}
	}
	return p, true
}

// bytes is the private state as the framework writes it: its keys and the provider's with a
// value, as one JSON object (each value base64-encoded), nil without any. The probe checks it
// against the framework's own.
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
	out, _ := json.Marshal(merged) // a map of strings to bytes always encodes
	return out
}
