//go:build !linux

package testutil

import "time"

// ThreadCPUTime is not available here: it reports false, and CPUTimer
// then reports nothing.
func ThreadCPUTime() (time.Duration, bool) { return 0, false }
