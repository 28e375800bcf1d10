//go:build !unix

package engine

import "time"

// processCPUTime reports nothing where getrusage is missing; benchmarks
// then leave out their CPU figure.
func processCPUTime() time.Duration { return 0 }
