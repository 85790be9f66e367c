// Package retrypolicy is the retry budget shared by the provider's API
// clients (Kubernetes and SageMaker): the values of the provider's `retry`
// block, their defaults, and the wait between attempts.
package retrypolicy

import (
	"context"
	"math/rand/v2"
	"time"
)

// Settings is the provider's `retry` block. Zero values mean the
// corresponding Default value.
type Settings struct {
	// MaxAttempts is the total number of attempts, the first one included;
	// 1 disables retries.
	MaxAttempts int
	MinBackoff  time.Duration
	MaxBackoff  time.Duration
	// MaxElapsed bounds one request's retries by time: no attempt starts
	// later than MaxElapsed after the first, and no wait runs past it. Like
	// the aws provider's retry settings, the budget is attempts and time,
	// whichever ends first, so a real outage fails in bounded time while
	// a flaky server is absorbed.
	MaxElapsed time.Duration
}

// Default holds the values used for zero fields of Settings.
//
// Ten attempts absorb a server that fails 30 % of the requests (a request
// fails every attempt with probability 0.3^10, about 6 in a million) and the
// two-minute budget makes an outage fail within about two minutes per
// request: the waits grow 0.5s, 1s, 2s ... up to 30s.
var Default = Settings{
	MaxAttempts: 10,
	MinBackoff:  500 * time.Millisecond,
	MaxBackoff:  30 * time.Second,
	MaxElapsed:  2 * time.Minute,
}

// WithDefaults returns s with zero (or negative) fields replaced by Default
// and MaxBackoff raised to MinBackoff when it is smaller.
func (s Settings) WithDefaults() Settings {
	if s.MaxAttempts <= 0 {
		s.MaxAttempts = Default.MaxAttempts
	}
	if s.MinBackoff <= 0 {
		s.MinBackoff = Default.MinBackoff
	}
	if s.MaxBackoff <= 0 {
		s.MaxBackoff = Default.MaxBackoff
	}
	if s.MaxBackoff < s.MinBackoff {
		s.MaxBackoff = s.MinBackoff
	}
	if s.MaxElapsed <= 0 {
		s.MaxElapsed = Default.MaxElapsed
	}
	return s
}

// Backoff returns the wait before retry number attempt+1 (attempt is
// 0-based): drawn uniformly from [b, min(2b, maxWait)] with
// b = minWait * 2^attempt, and from [3/4 maxWait, maxWait] once b reaches
// maxWait. Exponential growth with jitter, never below minWait nor above
// maxWait, so clients that failed together do not retry together.
func Backoff(minWait, maxWait time.Duration, attempt int) time.Duration {
	base := minWait
	for i := 0; i < attempt && base < maxWait; i++ {
		base *= 2
	}
	if base >= maxWait || base <= 0 {
		base = maxWait
	}
	lo, hi := base, min(2*base, maxWait)
	if lo >= hi {
		lo = max(maxWait-maxWait/4, minWait)
		hi = maxWait
	}
	d := lo
	if hi > lo {
		d += rand.N(hi - lo + 1)
	}
	return min(max(d, minWait), maxWait)
}

// Clock is where a retry loop reads the time its budget is counted in and waits between
// attempts. The provider uses Wall only; a test gives a loop a clock of its own, so that what it
// checks (the attempts a time budget allows, the wait a Retry-After asked for) does not depend
// on how punctually timers fire on a loaded machine.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, returning ctx's error in that case.
	Sleep(ctx context.Context, d time.Duration) error
}

// Wall is the real clock: time.Now and Sleep.
var Wall Clock = wall{}

type wall struct{}

func (wall) Now() time.Time                                   { return time.Now() }
func (wall) Sleep(ctx context.Context, d time.Duration) error { return Sleep(ctx, d) }

// Sleep waits d or until ctx is done, returning ctx's error in that case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
