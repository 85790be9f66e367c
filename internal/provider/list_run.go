package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
)

// streamList is the List of every list resource: it reads the list block's configuration M and
// the provider data to list with, and start checks the configuration (a failure goes to diags)
// and returns the listing, which sends the results of what it lists to s. A failure before the
// listing is the stream's only result; what says what is listed, in the log and in the
// diagnostic of a provider that cannot list.
func streamList[M any](ctx context.Context, b *listBase, req list.ListRequest, stream *list.ListResultsStream, what string,
	start func(pd *providerData, m M, diags *diag.Diagnostics) (listing func(s *listStream) error)) {
	var m M
	diags := req.Config.Get(ctx, &m)
	pd := b.data("list "+what, &diags)
	var listing func(*listStream) error
	if !diags.HasError() {
		listing = start(pd, m, &diags)
	}
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		s := &listStream{push: push, limit: req.Limit}
		s.fail(listing(s))
		logListed(ctx, what, s)
	}
}
