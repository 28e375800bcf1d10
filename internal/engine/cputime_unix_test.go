//go:build unix

package engine

import (
	"syscall"
	"time"
)

// processCPUTime is the CPU time (user and system, all threads) this
// process has used; zero if the system cannot say.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
