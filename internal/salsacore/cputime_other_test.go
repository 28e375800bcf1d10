//go:build !linux

package salsacore_test

import "time"

// threadCPUTime is not measured outside Linux; the benchmarks then report
// wall time only.
func threadCPUTime() time.Duration { return 0 }
