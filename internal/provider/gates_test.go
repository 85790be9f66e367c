package provider

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The provider runs in the test's process, so a test can tell that it has reached a point by
// finding a goroutine blocked in a function: that proves a wait, where a sleep would only
// give it time.

// Functions a test waits for the provider to be blocked in.
const (
	// blockedInQuotaClaim: a create of the SageMaker path waits for another create of the same
	// team to send its request.
	blockedInQuotaClaim = "internal/backend/sagemakerbackend.(*teamQuotas).Claim("
	// Creates on the Kubernetes path wait for a ClusterQueue or a Namespace being deleted to
	// go (only a create waits there).
	blockedInQueueGone     = "internal/backend/kueuebackend.(*teamQuotas).WaitGone("
	blockedInNamespaceGone = "internal/backend/kueuebackend.(*teamNamespaces).WaitGone("
)

// blockedIn reports whether a goroutine is blocked (in a select, a channel operation or a
// sleep) with fn on its stack.
func blockedIn(fn string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		waiting := strings.Contains(header, "[select") || strings.Contains(header, "[chan receive") || strings.Contains(header, "[sleep")
		if waiting && strings.Contains(g, fn) {
			return true
		}
	}
	return false
}

// waitBlockedIn waits, up to timeout, for a goroutine blocked in fn, and reports whether one
// was found.
func waitBlockedIn(fn string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for !blockedIn(fn) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// gate holds a request (or any step) until the test opens it: Hold blocks, signalling
// Arrived first; Open lets every holder through, once, and is also called when the test ends.
type gate struct {
	arrived chan struct{}
	open    chan struct{}
	once    sync.Once
	arrive  sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{arrived: make(chan struct{}), open: make(chan struct{})}
	t.Cleanup(g.Open)
	return g
}

// Hold signals arrival and blocks until the gate is opened.
func (g *gate) Hold() {
	g.arrive.Do(func() { close(g.arrived) })
	<-g.open
}

// Open lets the holders through.
func (g *gate) Open() { g.once.Do(func() { close(g.open) }) }

// Arrived is closed once something reached Hold.
func (g *gate) Arrived() <-chan struct{} { return g.arrived }
