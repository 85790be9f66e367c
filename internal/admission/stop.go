package admission

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Stopped is the error of a prediction that its context stopped before scheduling settled: the
// deadline passed or the caller cancelled. Nothing is predicted then, as Undetermined with
// reason SimulationStopped would say of every Workload; errors.As finds it, and errors.Is
// finds the context's error (context.DeadlineExceeded or context.Canceled) through it.
type Stopped struct {
	// Cause is the context's error.
	Cause error
	// After is how long the prediction had run when it stopped.
	After time.Duration
}

// Error says that the prediction cannot be made and why.
func (e *Stopped) Error() string {
	why := "it was cancelled"
	if errors.Is(e.Cause, context.DeadlineExceeded) {
		why = "its deadline passed"
	}
	return fmt.Sprintf("the admission preview cannot be predicted: %s after %s", why, e.After.Round(time.Millisecond))
}

// Unwrap is the context's error.
func (e *Stopped) Unwrap() error { return e.Cause }

// stopper checks a prediction's context: often enough to stop within a small part of a second,
// and cheaply enough to do so inside preemption searches.
type stopper struct {
	ctx   context.Context
	start time.Time
	err   error
}

func newStopper(ctx context.Context) *stopper {
	return &stopper{ctx: ctx, start: time.Now()}
}

// stopped reports whether the context is done, and records why.
func (s *stopper) stopped() bool {
	if s == nil {
		return false
	}
	if s.err == nil {
		if err := s.ctx.Err(); err != nil {
			s.err = &Stopped{Cause: err, After: time.Since(s.start)}
		}
	}
	return s.err != nil
}

// SimulateContext is Simulate under a context: it returns a *Stopped error, and no outcome,
// when ctx is done before scheduling settles. It checks ctx before every scheduling cycle and
// before every Workload's flavor assignment and preemption search.
func SimulateContext(ctx context.Context, c Cluster) (Outcome, error) {
	return simulateContext(ctx, c, nil)
}

// simulateContext is SimulateContext with the models of m where it has them (m may be nil).
func simulateContext(ctx context.Context, c Cluster, m *models) (Outcome, error) {
	stop := newStopper(ctx)
	if stop.stopped() {
		return Outcome{}, stop.err
	}
	s := newStateOf(c, m)
	s.stop = stop
	s.run()
	if s.stop.err != nil {
		return Outcome{}, s.stop.err
	}
	return s.outcome(), nil
}

// EffectContext is Effect under a context: what the change from now to next does, or a
// *Stopped error when ctx is done before both predictions are made.
func EffectContext(ctx context.Context, now, next Cluster) (Outcome, error) {
	base, err := SimulateContext(ctx, now)
	if err != nil {
		return Outcome{}, err
	}
	after, err := SimulateContext(ctx, next)
	if err != nil {
		return Outcome{}, err
	}
	return difference(base, after), nil
}
