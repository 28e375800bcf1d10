//go:build !linux

package testutil

import "time"

// threadCPUTime is not available here; CPUTimer then reports nothing.
func threadCPUTime() (time.Duration, bool) { return 0, false }
