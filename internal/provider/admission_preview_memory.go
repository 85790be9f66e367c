package provider

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// makeRoomForSnapshot makes room under the process's soft memory limit for the preview's
// snapshot, which is about to be read; the read's end, given whether it holds a snapshot, sets
// the limit the rest of the plan runs with, and reports the live heap and that limit (zero when
// it left the limit as it was). The provider sets a limit sized for a heap of a few tens of
// megabytes (main.go). The snapshot of a 1000-team cohort (4000 Workloads, 1000 ClusterQueues
// and LocalQueues, about 35 MB as held) is held for the rest of the plan and left the collector
// so little room under that limit that it ran after every few megabytes, while the read decoded
// and while the simulations ran: only 6 of 20 previews were made within the plan's budget.
// While the snapshot is read, whose size is not known before, the limit is doubled; once it is
// held, the limit is what it was plus the live heap, so the collector keeps the room it had
// before the read, and the resident set grows by about the snapshot's size, in the plans that
// preview only. A limit set by GOMEMLIMIT, or none, is left as it is, and so is the limit when
// the read holds nothing. The read's end collects garbage to measure the live heap: the caller
// need not wait for it.
func makeRoomForSnapshot() (readOver func(held bool) (live, limit int64)) {
	old := debug.SetMemoryLimit(-1)
	if os.Getenv("GOMEMLIMIT") != "" || old > math.MaxInt64/2 {
		return func(bool) (int64, int64) { return 0, 0 }
	}
	debug.SetMemoryLimit(2 * old)
	return func(held bool) (live, limit int64) {
		if !held {
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
}
