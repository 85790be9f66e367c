package kube

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// versionedFetches is a fetch that answers the number of the read, each read held until the
// test releases it.
type versionedFetches struct {
	started atomic.Int32
	release chan struct{}
	began   chan int
}

func newVersionedFetches() *versionedFetches {
	return &versionedFetches{release: make(chan struct{}), began: make(chan int, 16)}
}

func (f *versionedFetches) fetch(ctx context.Context) ([]byte, bool, error) {
	n := int(f.started.Add(1))
	f.began <- n
	select {
	case <-f.release:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	return []byte(strconv.Itoa(n)), true, nil
}

var freshKey = objectKey{schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}, "", "ml.p5.48xlarge"}

type freshAnswer struct {
	raw string
	err error
}

// startFresh calls fresh in a goroutine and returns where its answer arrives.
func startFresh(ctx context.Context, c *readCache, f *versionedFetches) <-chan freshAnswer {
	out := make(chan freshAnswer, 1)
	go func() {
		raw, _, err := c.fresh(ctx, freshKey, f.fetch)
		out <- freshAnswer{string(raw), err}
	}()
	return out
}

func TestFreshReadStartsAfterTheCall(t *testing.T) {
	c := &readCache{}
	joins := make(chan struct{}, 16)
	c.joined = func() { joins <- struct{}{} }
	f := newVersionedFetches()
	ctx := context.Background()

	first := startFresh(ctx, c, f)
	<-joins
	if n := <-f.began; n != 1 {
		t.Fatalf("read %d began, want 1", n)
	}
	// Three callers ask while the first read is in flight: its answer may predate them, so they
	// share the next read.
	var later []<-chan freshAnswer
	for range 3 {
		later = append(later, startFresh(ctx, c, f))
		<-joins
	}
	close(f.release)
	if a := <-first; a.raw != "1" || a.err != nil {
		t.Fatalf("first caller: %+v, want read 1", a)
	}
	for i, ch := range later {
		if a := <-ch; a.raw != "2" || a.err != nil {
			t.Errorf("caller %d: %+v, want read 2, which started after it asked", i+2, a)
		}
	}
	if got := f.started.Load(); got != 2 {
		t.Errorf("%d reads, want 2 for four callers", got)
	}
	// The fresh answer is what the cache now holds.
	raw, found, err := c.get(ctx, freshKey, func(context.Context) ([]byte, bool, error) {
		return nil, false, errors.New("the cache was not updated")
	})
	if string(raw) != "2" || !found || err != nil {
		t.Errorf("cached: %q %v %v, want read 2", raw, found, err)
	}
}

func TestFreshReadLeaderCancelled(t *testing.T) {
	c := &readCache{}
	joins := make(chan struct{}, 16)
	c.joined = func() { joins <- struct{}{} }
	f := newVersionedFetches()
	ctx := context.Background()

	first := startFresh(ctx, c, f)
	<-joins
	<-f.began
	leaderCtx, cancelLeader := context.WithCancel(ctx)
	leader := startFresh(leaderCtx, c, f)
	<-joins
	follower := startFresh(ctx, c, f)
	<-joins
	// The next read's leader gives up while waiting: its follower leads instead.
	cancelLeader()
	if a := <-leader; !errors.Is(a.err, context.Canceled) {
		t.Fatalf("cancelled leader: %+v, want context.Canceled", a)
	}
	<-joins // the follower, again, now leading
	close(f.release)
	if a := <-first; a.raw != "1" {
		t.Fatalf("first caller: %+v, want read 1", a)
	}
	if a := <-follower; a.raw != "2" || a.err != nil {
		t.Errorf("follower: %+v, want read 2", a)
	}
}
