//go:build linux

package chachacore

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPUTime is the CPU time the calling OS thread has used.
func threadCPUTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// cpuTimer reports, next to the wall-clock figures, the benchmark's own CPU
// time per operation and the matching throughput: on a machine shared with
// other busy processes these vary far less than wall time, and they are
// what `openssl speed` reports without -elapsed.
type cpuTimer struct {
	b     *testing.B
	start time.Duration
}

func startCPUTimer(b *testing.B) cpuTimer {
	runtime.LockOSThread()
	return cpuTimer{b: b, start: threadCPUTime()}
}

func (c cpuTimer) report(bytesPerOp int) {
	d := threadCPUTime() - c.start
	runtime.UnlockOSThread()
	if d <= 0 || c.b.N == 0 {
		return
	}
	ns := float64(d.Nanoseconds()) / float64(c.b.N)
	c.b.ReportMetric(ns, "cpu-ns/op")
	c.b.ReportMetric(float64(bytesPerOp)/ns*1e3, "cpu-MB/s")
}
