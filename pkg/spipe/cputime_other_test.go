//go:build !unix

package spipe

import "time"

// processCPUTime is unavailable here; benchmarks then report wall time only.
func processCPUTime() time.Duration { return 0 }
