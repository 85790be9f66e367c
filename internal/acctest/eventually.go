package acctest

import (
	"context"
	"fmt"
	"time"
)

// PollInterval is how often Eventually reads the world again: short next to the seconds a
// controller takes to act, long enough to leave the API server idle.
const PollInterval = 100 * time.Millisecond

// Eventually calls check until it reports done, and fails once timeout has passed (or ctx
// ends) with what was awaited and the last state check described. An error from check ends
// the wait at once: it means the world cannot reach the state, not that it has not yet. An
// error while the wait's context is done is the timeout cutting a read short, and reported as
// the timeout.
func Eventually(ctx context.Context, timeout time.Duration, what string, check func(ctx context.Context) (done bool, state string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	last := "nothing read yet"
	for {
		done, state, err := check(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			return fmt.Errorf("%s: %w", what, err)
		case err == nil && done:
			return nil
		case state != "":
			last = state
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not within %s; last seen: %s", what, timeout, last)
		case <-tick.C:
		}
	}
}
