//go:build linux

package salsacore_test

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPUTime is the CPU time the calling OS thread has used so far, or 0
// if the clock cannot be read. Benchmarks lock their goroutine to the
// thread around it. On a machine shared with busy processes it varies far
// less than wall time: time spent descheduled is not counted.
func threadCPUTime() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
