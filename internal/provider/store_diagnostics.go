package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
)

// storeGet reads key through get, with a failed request as a diagnostic.
func storeGet[T any](ctx context.Context, get func(context.Context, string) (T, error), key string) (T, diag.Diagnostics) {
	var diags diag.Diagnostics
	v, err := get(ctx, key)
	if err != nil {
		storeError(err).addTo(&diags)
	}
	return v, diags
}

// storeError is the diagnostic of a failed backend request or of a problem: the backend words
// both in its own terms; a request it did not word names the object and the store's answer.
func storeError(err error) storeDiag {
	var re *backend.RequestError
	if errors.As(err, &re) {
		if re.Problem.Summary != "" {
			return storeDiag(re.Problem)
		}
		verb := map[backend.Op]string{backend.OpRead: "read", backend.OpCreate: "create", backend.OpApply: "update", backend.OpDelete: "delete"}[re.Op]
		return storeDiag{fmt.Sprintf("Cannot %s the %s", verb, re.Kind), fmt.Sprintf("%s %q: %s.", re.Kind, re.Name, re.Err)}
	}
	var p backend.Problem
	if errors.As(err, &p) {
		return storeDiag(p)
	}
	return storeDiag{"Request failed", err.Error()}
}

// changedOutside is the error of a write over the version the state last saw that the store
// refused (ErrChanged): someone changed the object since the refresh. The kind comes from err,
// since the record the write was given carries only the id and version.
func changedOutside(summary string, err error, over *backend.Record) storeDiag {
	kind := "The object"
	var re *backend.RequestError
	if errors.As(err, &re) && re.Kind != "" {
		kind = re.Kind
	}
	return storeDiag{summary, fmt.Sprintf("%s %s was changed outside Terraform since the last refresh (it is no longer at "+
		"version %s), so this apply would overwrite that change blindly. Run terraform plan again to see the change, then apply.",
		kind, over.ID, over.Version)}
}

// storeCause is the failure a backend request reported, without what it means.
func storeCause(err error) error {
	var re *backend.RequestError
	if errors.As(err, &re) {
		return re.Err
	}
	return err
}

// storeDiag is the error diagnostic of a failed request or a problem, as the backend words it.
type storeDiag backend.Problem

func (e storeDiag) addTo(diags *diag.Diagnostics) { diags.AddError(e.Summary, e.Detail) }

func (e storeDiag) addAt(diags *diag.Diagnostics, at path.Path) {
	diags.AddAttributeError(at, e.Summary, e.Detail)
}

// leftInPlace warns that a destroy did not delete o because it is managed by another owner (by);
// then says what that meant for this resource.
func leftInPlace(diags *diag.Diagnostics, o backend.ObjectRef, by, then string) {
	diags.AddWarning(o.Kind+" left in place", fmt.Sprintf("%s %q is managed by %s, not by this resource, so %s",
		o.Kind, o.Name, by, then))
}

// refuseOwned refuses to change o, which is managed by another owner (by).
func refuseOwned(diags *diag.Diagnostics, at path.Path, o backend.ObjectRef, by string) {
	diags.AddAttributeError(at, "Owned by another resource", fmt.Sprintf(
		"%s %q is managed by %s, not by this resource, so it was not changed. Import it to take it over "+
			"explicitly, or remove this resource from state.", o.Kind, o.Name, by))
}

// notDeleted is the error of a delete that failed or did not finish within timeout, as the
// backend words it; rpcCtx outlives the delete's context, for what the backend reads to say
// what holds the object.
func notDeleted(rpcCtx context.Context, b backend.Backend, err error, timeout time.Duration) storeDiag {
	return storeDiag(b.Words.NotDeleted(context.WithoutCancel(rpcCtx), err, timeout))
}
