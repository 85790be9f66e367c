// Package retrypolicytest is a retrypolicy.Clock for tests of retry loops: its time moves only
// when a loop waits, and by exactly what it waits, so a test of a time budget or of a wait's
// length checks the loop's arithmetic rather than how punctually the machine's timers fire.
package retrypolicytest

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Clock is a retrypolicy.Clock whose Sleep returns at once, having moved the time on.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

// NewClock returns a Clock at a fixed instant.
func NewClock() *Clock {
	return &Clock{now: time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)}
}

// Now is the start plus every wait so far.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep moves the time on by d and records the wait, unless ctx is done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.waits = append(c.waits, d)
	return nil
}

// Waits are the waits so far, in order.
func (c *Clock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.waits)
}
