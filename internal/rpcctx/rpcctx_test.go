package rpcctx

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

type key struct{}

// retainingServer keeps every context it is given, as terraform-plugin-framework v1.19 does
// (a derived context with its cancel function kept until StopProvider).
type retainingServer struct {
	tfprotov6.ProviderServer
	kept   []context.Context
	during []any
}

func (s *retainingServer) ReadResource(ctx context.Context, _ *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	derived, cancel := context.WithCancel(ctx)
	_ = cancel // kept, never called, like the framework's registerContext
	s.kept = append(s.kept, derived)
	s.during = append(s.during, derived.Value(key{}))
	return &tfprotov6.ReadResourceResponse{}, nil
}

// While an RPC runs, its context carries the request's values, deadline and cancellation;
// once it returns, what the framework kept no longer reaches the request's values.
func TestWrapReleasesRequestContexts(t *testing.T) {
	inner := &retainingServer{}
	s := Wrap(inner)
	deadline := time.Now().Add(time.Hour)
	for i := range 3 {
		ctx, cancel := context.WithDeadline(context.WithValue(context.Background(), key{}, i), deadline)
		if _, err := s.ReadResource(ctx, &tfprotov6.ReadResourceRequest{}); err != nil {
			t.Fatal(err)
		}
		kept := inner.kept[i]
		if d, ok := kept.Deadline(); !ok || !d.Equal(deadline) {
			t.Errorf("deadline %v %v", d, ok)
		}
		if inner.during[i] != i {
			t.Errorf("during call %d the value was %v", i, inner.during[i])
		}
		if v := kept.Value(key{}); v != nil {
			t.Errorf("after call %d the kept context still reaches the request's value %v", i, v)
		}
		if kept.Err() != nil {
			t.Errorf("not cancelled yet, Err = %v", kept.Err())
		}
		cancel() // gRPC cancels the request context when the stream ends
		select {
		case <-kept.Done():
		case <-time.After(time.Second):
			t.Fatal("cancellation of the request did not reach the kept context")
		}
		if kept.Err() == nil {
			t.Error("Done is closed but Err is nil")
		}
	}
}

// RPCs that run once per process pass through untouched.
func TestWrapPassesOtherRPCsThrough(t *testing.T) {
	inner := &stopCounter{}
	if _, err := Wrap(inner).StopProvider(context.Background(), &tfprotov6.StopProviderRequest{}); err != nil || inner.n != 1 {
		t.Fatalf("StopProvider: %v, %d calls", err, inner.n)
	}
}

type stopCounter struct {
	tfprotov6.ProviderServer
	n int
}

func (s *stopCounter) StopProvider(context.Context, *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	s.n++
	return &tfprotov6.StopProviderResponse{}, nil
}

// stopSeer records what StopRequested says inside an RPC.
type stopSeer struct {
	stopCounter
	saw bool
}

func (s *stopSeer) ApplyResourceChange(ctx context.Context, _ *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	s.saw = StopRequested(ctx)
	return &tfprotov6.ApplyResourceChangeResponse{}, nil
}

// StopRequested answers for the server that got StopProvider, not for others in the process.
func TestStopRequestedIsPerServer(t *testing.T) {
	stopped, running := &stopSeer{}, &stopSeer{}
	a, b := Wrap(stopped), Wrap(running)
	ctx := context.Background()
	if _, err := a.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{}); err != nil || stopped.saw {
		t.Fatalf("before StopProvider: %v, saw %v", err, stopped.saw)
	}
	if _, err := a.StopProvider(ctx, &tfprotov6.StopProviderRequest{}); err != nil || stopped.n != 1 {
		t.Fatalf("StopProvider: %v, %d calls", err, stopped.n)
	}
	_, _ = a.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{})
	_, _ = b.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{})
	if !stopped.saw || running.saw {
		t.Errorf("StopRequested: stopped server %v, other server %v; want true, false", stopped.saw, running.saw)
	}
	if StopRequested(ctx) {
		t.Error("a context no RPC served says stop was requested")
	}
}
