package provider

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// The soft memory limit is doubled while the snapshot is read and grows by the live heap once
// it is held, only when the provider set the limit itself and only when the read holds one.
func TestMakeRoomForSnapshot(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "") // as the provider runs unless the user sets it
	before := debug.SetMemoryLimit(88 << 20)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	readOver := makeRoomForSnapshot()
	if during := debug.SetMemoryLimit(-1); during != 2*88<<20 {
		t.Errorf("limit while reading %d, want twice 88 MiB", during)
	}
	snapshot := make([]byte, 32<<20) // what the snapshot holds, live from here on
	for i := range snapshot {
		snapshot[i] = byte(i)
	}
	live, limit := readOver(true)
	runtime.KeepAlive(snapshot)
	if live < int64(len(snapshot)) {
		t.Errorf("live heap %d, want at least the snapshot's %d bytes", live, len(snapshot))
	}
	if got := debug.SetMemoryLimit(-1); limit != 88<<20+live || got != limit {
		t.Errorf("limit %d (reported %d), want 88 MiB + the live heap %d = %d", got, limit, live, 88<<20+live)
	}

	debug.SetMemoryLimit(88 << 20)
	if _, limit := makeRoomForSnapshot()(false); limit != 0 || debug.SetMemoryLimit(-1) != 88<<20 {
		t.Errorf("after a failed read, the limit became %d", debug.SetMemoryLimit(-1))
	}
	for _, tt := range []struct {
		name, env string
		limit     int64
	}{
		{"no limit", "", math.MaxInt64},
		{"GOMEMLIMIT", "400MiB", 400 << 20},
	} {
		t.Setenv("GOMEMLIMIT", tt.env)
		debug.SetMemoryLimit(tt.limit)
		readOver := makeRoomForSnapshot()
		during := debug.SetMemoryLimit(-1)
		if _, limit := readOver(true); during != tt.limit || limit != 0 || debug.SetMemoryLimit(-1) != tt.limit {
			t.Errorf("%s: the limit became %d while reading and %d after", tt.name, during, debug.SetMemoryLimit(-1))
		}
	}
}
