package acctest

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// A test process ended by a signal (Ctrl-C, or make test stopping the test process it runs
// beside the main one after the main one failed) would leave running the control planes it
// started: envtest and localcluster start their processes in process groups of their own, which a
// signal to the test's group does not reach. So the process stops them before it exits.
var onSignal struct {
	mu     sync.Mutex
	stops  []func()
	listen sync.Once
}

// stopOnSignal registers stop to run, the latest first, when the process gets SIGINT or SIGTERM;
// then the process exits.
func stopOnSignal(stop func()) {
	onSignal.mu.Lock()
	defer onSignal.mu.Unlock()
	onSignal.stops = append(onSignal.stops, stop)
	onSignal.listen.Do(func() {
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
		go func() {
			sig := <-signals
			onSignal.mu.Lock()
			for i := len(onSignal.stops) - 1; i >= 0; i-- {
				onSignal.stops[i]()
			}
			// Only now: a write to a closed stderr (its reader got the signal too) ends the process.
			fmt.Fprintf(os.Stderr, "acceptance tests: %v: stopped the control planes this process started\n", sig)
			os.Exit(1)
		}()
	})
}
