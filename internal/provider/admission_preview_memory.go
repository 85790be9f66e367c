package provider

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// makeRoomForSnapshot runs read, which reads the preview's snapshot and reports whether it
// holds one, with room for it under the process's soft memory limit, and reports the live heap
// and the limit it leaves (zero when it left the limit as it was). The provider sets a limit
// sized for a heap of a few tens of megabytes (main.go). The snapshot of a 1000-team cohort
// (4000 Workloads, 1000 ClusterQueues and LocalQueues, about 35 MB as held) is held for the
// rest of the plan and left the collector so little room under that limit that it ran after
// every few megabytes, while the read decoded and while the simulations ran: only 6 of 20
// previews were made within the plan's budget. While the snapshot is read, whose size is not
// known before, the limit is doubled; once it is held, the limit is what it was plus the live
// heap, so the collector keeps the room it had before the read, and the resident set grows by
// about the snapshot's size, in the plans that preview only. A limit set by GOMEMLIMIT, or none,
// is left as it is, and so is the limit when the read holds nothing.
func makeRoomForSnapshot(read func() bool) (live, limit int64) {
	old := debug.SetMemoryLimit(-1)
	if os.Getenv("GOMEMLIMIT") != "" || old > math.MaxInt64/2 {
		read()
		return 0, 0
	}
	debug.SetMemoryLimit(2 * old)
	if !read() {
		debug.SetMemoryLimit(old)
		return 0, 0
	}
	// What the snapshot holds is live only once it was read: a collection now measures it.
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		debug.SetMemoryLimit(old)
		return 0, 0
	}
	live = int64(sample[0].Value.Uint64())
	limit = old + live
	debug.SetMemoryLimit(limit)
	return live, limit
}
