package provider

import (
	"sync"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
)

// The provider runs in the test's process, so a test can learn that it has reached a wait from
// the backend itself (backend.ObserveWaits): that proves the wait, where a sleep would only give
// it time.

// waitBegins returns a channel closed once a backend begins a wait of kind for team. Call it
// before the step whose wait it awaits; it observes until the test ends.
func waitBegins(t *testing.T, kind backend.WaitKind, team string) <-chan struct{} {
	began := make(chan struct{})
	var once sync.Once
	t.Cleanup(backend.ObserveWaits(func(w backend.Wait) {
		if w.Kind == kind && w.Team == team {
			once.Do(func() { close(began) })
		}
	}))
	return began
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
