package backend

import "sync"

// WaitKind names a wait of a backend on another actor.
type WaitKind string

const (
	// WaitQuotaGone: a create waits for the team's quota, being deleted, to go.
	WaitQuotaGone WaitKind = "quota gone"
	// WaitNamespaceGone: a create waits for the team's namespace, being deleted, to go.
	WaitNamespaceGone WaitKind = "namespace gone"
	// WaitQuotaClaim: a create waits for another create of the same team to send its request
	// (the SageMaker path's claim).
	WaitQuotaClaim WaitKind = "quota claim"
)

// A Wait is one wait of a backend as it begins: what is awaited, for which team.
type Wait struct {
	Kind WaitKind
	Team string
}

// waitObservers are the functions ObserveWaits registered, by registration.
var waitObservers struct {
	sync.Mutex
	next int
	fns  map[int]func(Wait)
}

// ObserveWaits calls fn, from the waiting goroutine, as each wait of a backend begins, until
// stop is called. The provider never calls it: tests do, to act once the provider provably
// waits (a test in the provider's process releases what it waits for), where a sleep would
// only give it time. fn must not block.
func ObserveWaits(fn func(Wait)) (stop func()) {
	waitObservers.Lock()
	defer waitObservers.Unlock()
	if waitObservers.fns == nil {
		waitObservers.fns = map[int]func(Wait){}
	}
	id := waitObservers.next
	waitObservers.next++
	waitObservers.fns[id] = fn
	return func() {
		waitObservers.Lock()
		defer waitObservers.Unlock()
		delete(waitObservers.fns, id)
	}
}

// Waiting tells the observers, if any, that w begins. A backend calls it just before it waits.
func Waiting(w Wait) {
	waitObservers.Lock()
	defer waitObservers.Unlock()
	for _, fn := range waitObservers.fns {
		fn(w)
	}
}
