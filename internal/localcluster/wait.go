package localcluster

import (
	"context"
	"time"
)

// WaitUntil calls check every interval until it reports done or fails, and returns check's
// error. Once a check after deadline finds the state not reached, it returns timedOut's error
// (made then, so that it can say what the last check saw); when ctx ends first, ctx's error.
func WaitUntil(ctx context.Context, deadline time.Time, interval time.Duration, check func(ctx context.Context) (done bool, err error), timedOut func() error) error {
	for {
		done, err := check(ctx)
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return timedOut()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
