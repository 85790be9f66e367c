package retrypolicytest

import (
	"context"
	"slices"
	"testing"
	"time"
)

// The time moves by exactly the waits, and a done context stops a wait without moving it.
func TestClock(t *testing.T) {
	c := NewClock()
	start := c.Now()
	if err := c.Sleep(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := c.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Minute); err != context.Canceled {
		t.Errorf("Sleep on a done context = %v, want context.Canceled", err)
	}
	if got := c.Now().Sub(start); got != time.Hour+time.Millisecond {
		t.Errorf("the clock moved %s, want 1h0m0.001s", got)
	}
	if want := []time.Duration{time.Hour, time.Millisecond}; !slices.Equal(c.Waits(), want) {
		t.Errorf("waits %v, want %v", c.Waits(), want)
	}
}
