//go:build !linux

package testutil

import "time"

// ThreadCPUTime is not available here: it reports false, and CPUTimer
// then reports nothing.
func ThreadCPUTime() (time.Duration, bool) { return 0, false }

// ProcessCPUTime is not available here either: it reports false, and
// benchmarks leave out their CPU figures.
func ProcessCPUTime() (time.Duration, bool) { return 0, false }
