package chachacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// TestHChaChaEveryKernel holds HChaCha to the XChaCha vectors and to the
// generic permutation under every kernel (see
// kerneltest.EverySubkeyKernel).
func TestHChaChaEveryKernel(t *testing.T) {
	var v testutil.XChaCha
	testutil.LoadVectors(t, "xchacha.json", &v)
	kerneltest.EverySubkeyKernel(t, core, HChaCha, v.HChaCha20)
}
