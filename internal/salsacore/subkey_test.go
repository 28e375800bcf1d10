package salsacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// TestHSalsaEveryKernel holds HSalsa to NaCl's vectors and to the generic
// permutation under every kernel (see kerneltest.EverySubkeyKernel).
func TestHSalsaEveryKernel(t *testing.T) {
	var v testutil.XSalsa20
	testutil.LoadVectors(t, "xsalsa20.json", &v)
	kerneltest.EverySubkeyKernel(t, core, HSalsa, v.HSalsa20)
}
