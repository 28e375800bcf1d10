//go:build linux

package salsacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// TestKernelsStayInBounds runs every kernel, through the dispatcher and
// directly, on buffers that end at an unmapped page (see
// kerneltest.StayInBounds).
func TestKernelsStayInBounds(t *testing.T) {
	kerneltest.StayInBounds(t, core, functions())
}
