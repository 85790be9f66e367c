package acctest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestEventually(t *testing.T) {
	t.Run("done after a few reads", func(t *testing.T) {
		reads := 0
		err := Eventually(context.Background(), time.Minute, "three reads", func(context.Context) (bool, string, error) {
			reads++
			return reads == 3, "", nil
		})
		if err != nil || reads != 3 {
			t.Fatalf("got %v after %d reads, want nil after 3", err, reads)
		}
	})
	t.Run("an error ends the wait at once", func(t *testing.T) {
		reads := 0
		boom := errors.New("boom")
		err := Eventually(context.Background(), time.Minute, "a read", func(context.Context) (bool, string, error) {
			reads++
			return false, "", boom
		})
		if !errors.Is(err, boom) || reads != 1 {
			t.Fatalf("got %v after %d reads, want boom after 1", err, reads)
		}
	})
	t.Run("a read cut short by the end of the wait is the timeout", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		err := Eventually(ctx, time.Minute, "a state never reached", func(ctx context.Context) (bool, string, error) {
			cancel() // the wait ends during the read, which fails for that reason
			return false, "still pending", ctx.Err()
		})
		if err == nil || errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "still pending") {
			t.Fatalf("got %v, want the end of the wait with the last state seen, not the read's error", err)
		}
	})
	t.Run("a cancelled context names the last state", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		err := Eventually(ctx, time.Minute, "a state never reached", func(context.Context) (bool, string, error) {
			cancel()
			return false, "still pending", nil
		})
		if err == nil || !strings.Contains(err.Error(), "a state never reached") || !strings.Contains(err.Error(), "still pending") {
			t.Fatalf("got %v, want the awaited state and the last one seen", err)
		}
	})
}
