package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// readWhenReady is a data source's first read from the store: of key (a team, an instance type)
// by read, once ready (one of the backend's Readiness checks) says the store can be reached for
// it with the provider configuration known so far. Either's error is a store diagnostic, and ok
// false.
func readWhenReady[T any](ctx context.Context, pd *providerData, key string, ready func(key string, pending []string) error,
	read func(ctx context.Context, key string) (T, error), diags *diag.Diagnostics) (value T, ok bool) {
	if err := ready(key, pd.pendingConfig); err != nil {
		storeError(err).addTo(diags)
		return value, false
	}
	value, err := read(ctx, key)
	if err != nil {
		storeError(err).addTo(diags)
		return value, false
	}
	return value, true
}
