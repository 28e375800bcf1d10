package chachacore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// forEachKernel runs f once per implementation this CPU supports, with
// XORKeyStreamBlocks switched to it, so every vector test covers every path
// (kernels added later are picked up without touching the tests). It does
// not run the subtests in parallel: the switch is package-global.
func forEachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	names := Kernels()
	require.NotEmpty(t, names)
	require.Equal(t, "generic", names[len(names)-1], "generic must always be available, last")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			restore, err := UseKernel(name)
			require.NoError(t, err)
			defer restore()
			require.Equal(t, name, Kernel())
			f(t)
		})
	}
}
