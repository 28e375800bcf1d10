package testutil

import (
	"runtime"
	"testing"
	"time"
)

// CPUTimer adds the benchmark's own CPU time to its results, as cpu-ns/op
// and cpu-MB/s beside the wall-clock ns/op and MB/s. On a machine shared
// with other busy processes the wall clock also counts the time the
// benchmark waits for a CPU; the thread's CPU time does not, so it varies
// far less (it is still slowed by a busy sibling hyperthread).
type CPUTimer struct {
	b     *testing.B
	start time.Duration
	ok    bool
}

// StartCPUTimer pins the benchmark goroutine to its thread and starts
// counting; call it right before the b.Loop loop and Report right after.
func StartCPUTimer(b *testing.B) CPUTimer {
	runtime.LockOSThread()
	start, ok := ThreadCPUTime()
	return CPUTimer{b: b, start: start, ok: ok}
}

// Report unpins the goroutine and reports the CPU time per operation and
// the throughput of bytesPerOp bytes per operation.
func (c CPUTimer) Report(bytesPerOp int) {
	end, ok := ThreadCPUTime()
	runtime.UnlockOSThread()
	d := end - c.start
	if !c.ok || !ok || d <= 0 || c.b.N == 0 {
		return
	}
	ns := float64(d.Nanoseconds()) / float64(c.b.N)
	c.b.ReportMetric(ns, "cpu-ns/op")
	c.b.ReportMetric(float64(bytesPerOp)/ns*1e3, "cpu-MB/s")
}
