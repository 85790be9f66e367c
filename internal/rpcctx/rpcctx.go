// Package rpcctx keeps the provider's memory flat over long Terraform runs.
//
// terraform-plugin-framework v1.19.0 (the newest release) registers a cancel function for the
// context of every RPC it serves and keeps it until StopProvider, which Terraform sends only when
// it interrupts a run. Each kept cancel function holds the whole request context: the loggers
// and fields terraform-plugin-go attaches to every request, and what they reference. A plan of
// 1000 teams makes about 10,000 such RPCs, and the provider grew to 370 MB. Wrap hands the
// framework a context that forwards to the request's context while the RPC runs and lets go of
// it when the RPC returns, so what the framework keeps is a few dozen bytes per RPC.
package rpcctx

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Wrap returns s with the per-resource RPCs (the ones Terraform calls once per resource
// instance) served through a released context. The other RPCs run a few times per process
// and pass through unchanged.
func Wrap(s tfprotov6.ProviderServer) tfprotov6.ProviderServer {
	return server{ProviderServer: s, stopped: new(atomic.Bool)}
}

type server struct {
	tfprotov6.ProviderServer
	// stopped is set once Terraform sent StopProvider to this server.
	stopped *atomic.Bool
}

// detached forwards to a request context until released. Done and Deadline are captured at
// creation, so cancellation still reaches whatever the framework derived from it.
type detached struct {
	done        <-chan struct{}
	deadline    time.Time
	hasDeadline bool
	parent      atomic.Pointer[context.Context]
}

// detach returns a context for one RPC and the function that releases the request context.
func detach(ctx context.Context) (context.Context, func()) {
	d := &detached{done: ctx.Done()}
	d.deadline, d.hasDeadline = ctx.Deadline()
	d.parent.Store(&ctx)
	return d, func() { d.parent.Store(nil) }
}

func (d *detached) Deadline() (time.Time, bool) { return d.deadline, d.hasDeadline }

func (d *detached) Done() <-chan struct{} { return d.done }

func (d *detached) Err() error {
	if p := d.parent.Load(); p != nil {
		return (*p).Err()
	}
	select {
	case <-d.done:
		return context.Canceled
	default:
		return nil
	}
}

func (d *detached) Value(key any) any {
	if p := d.parent.Load(); p != nil {
		return (*p).Value(key)
	}
	return nil
}

// call runs one RPC with a detached context.
func call[Req, Resp any](stopped *atomic.Bool, ctx context.Context, rpc func(context.Context, Req) (Resp, error), req Req) (Resp, error) {
	ctx, release := detach(context.WithValue(ctx, stopKey{}, stopped))
	defer release()
	return rpc(ctx, req)
}

func (s server) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return call(s.stopped, ctx, s.ProviderServer.ValidateResourceConfig, req)
}

func (s server) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return call(s.stopped, ctx, s.ProviderServer.UpgradeResourceState, req)
}

func (s server) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return call(s.stopped, ctx, s.ProviderServer.ReadResource, req)
}

func (s server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return call(s.stopped, ctx, s.ProviderServer.PlanResourceChange, req)
}

func (s server) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return call(s.stopped, ctx, s.ProviderServer.ApplyResourceChange, req)
}

func (s server) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return call(s.stopped, ctx, s.ProviderServer.ImportResourceState, req)
}

func (s server) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return call(s.stopped, ctx, s.ProviderServer.ValidateDataResourceConfig, req)
}

func (s server) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return call(s.stopped, ctx, s.ProviderServer.ReadDataSource, req)
}

func (s server) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return call(s.stopped, ctx, s.ProviderServer.CallFunction, req)
}

type stopKey struct{}

// StopRequested reports whether Terraform asked the provider serving the RPC of ctx to stop: it was
// interrupted (Ctrl-C, SIGTERM), cancels the operations in flight and will still save the state
// they return. A cancelled context without it means Terraform (or its connection) went away. Only
// the per-resource RPCs Wrap serves carry the answer; for others it is false.
func StopRequested(ctx context.Context) bool {
	stopped, _ := ctx.Value(stopKey{}).(*atomic.Bool)
	return stopped != nil && stopped.Load()
}

func (s server) StopProvider(ctx context.Context, req *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	s.stopped.Store(true)
	return s.ProviderServer.StopProvider(ctx, req)
}
