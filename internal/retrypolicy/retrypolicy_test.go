package retrypolicy

import (
	"context"
	"testing"
	"time"
)

func TestWithDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Settings
		want Settings
	}{
		{"zero", Settings{}, Default},
		{"negative", Settings{MaxAttempts: -1, MinBackoff: -time.Second, MaxBackoff: -time.Second, MaxElapsed: -time.Second}, Default},
		{"set values stay", Settings{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: 4 * time.Second, MaxElapsed: time.Minute},
			Settings{MaxAttempts: 2, MinBackoff: time.Second, MaxBackoff: 4 * time.Second, MaxElapsed: time.Minute}},
		{"max raised to min", Settings{MaxAttempts: 2, MinBackoff: time.Minute},
			Settings{MaxAttempts: 2, MinBackoff: time.Minute, MaxBackoff: time.Minute, MaxElapsed: Default.MaxElapsed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.WithDefaults(); got != tc.want {
				t.Errorf("WithDefaults() = %+v, want %+v", got, tc.want)
			}
		})
	}
	if Default != (Settings{MaxAttempts: 10, MinBackoff: 500 * time.Millisecond, MaxBackoff: 30 * time.Second, MaxElapsed: 2 * time.Minute}) {
		t.Errorf("Default = %+v", Default)
	}
}

func TestBackoff(t *testing.T) {
	minWait, maxWait := 100*time.Millisecond, 2*time.Second
	for attempt := 0; attempt < 10; attempt++ {
		distinct := map[time.Duration]bool{}
		for range 50 {
			d := Backoff(minWait, maxWait, attempt)
			base := min(minWait<<attempt, maxWait)
			lo, hi := base, min(2*base, maxWait)
			if base == maxWait {
				lo = maxWait * 3 / 4
			}
			if d < lo || d > hi {
				t.Fatalf("attempt %d: wait %s outside [%s, %s]", attempt, d, lo, hi)
			}
			distinct[d] = true
		}
		if len(distinct) < 2 {
			t.Errorf("attempt %d: no jitter", attempt)
		}
	}
	if d := Backoff(time.Second, time.Second, 3); d != time.Second {
		t.Errorf("min = max: wait %s, want 1s", d)
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// An hour's sleep that ignored the done context would outlast the minute.
	done := make(chan error, 1)
	go func() { done <- Sleep(ctx, time.Hour) }()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("Sleep on a done context = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Sleep on a done context still sleeps")
	}
}
