//go:build linux

package testutil

import (
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPUTime is the CPU time the calling OS thread has used, and
// whether it could be read. Lock the goroutine to its thread around a
// measurement (runtime.LockOSThread).
func ThreadCPUTime() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// ProcessCPUTime is the CPU time (user and system, all threads) the whole
// process has used, and whether it could be read: what a benchmark with
// several goroutines (both ends of a connection) costs.
func ProcessCPUTime() (time.Duration, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
