package localcluster

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWaitUntil(t *testing.T) {
	never := func() error { t.Error("timedOut called before the deadline"); return nil }
	future := time.Now().Add(time.Hour)

	// Checks again until the state is reached.
	calls := 0
	err := WaitUntil(context.Background(), future, time.Millisecond, func(context.Context) (bool, error) {
		calls++
		return calls == 3, nil
	}, never)
	if err != nil || calls != 3 {
		t.Errorf("reached at the third check: err %v after %d checks, want nil after 3", err, calls)
	}

	// A check's error ends the wait at once.
	failed := errors.New("cannot be reached")
	calls = 0
	err = WaitUntil(context.Background(), future, time.Millisecond, func(context.Context) (bool, error) {
		calls++
		return false, failed
	}, never)
	if !errors.Is(err, failed) || calls != 1 {
		t.Errorf("failing check: err %v after %d checks, want %v after 1", err, calls, failed)
	}

	// Past the deadline, timedOut says what the last check saw.
	last := ""
	err = WaitUntil(context.Background(), time.Now().Add(-time.Second), time.Hour, func(context.Context) (bool, error) {
		last = "two left"
		return false, nil
	}, func() error { return errors.New("still " + last) })
	if err == nil || err.Error() != "still two left" {
		t.Errorf("past the deadline: %v, want the error of timedOut made after the check", err)
	}

	// A context that ends stops the wait with its error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = WaitUntil(ctx, future, time.Hour, func(context.Context) (bool, error) { return false, nil }, never)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ended context: %v, want %v", err, context.Canceled)
	}
}
