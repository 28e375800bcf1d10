package poly1305

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// forEachKernel runs f once per implementation this CPU supports, with that
// implementation active.
func forEachKernel(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, name := range Kernels() {
		t.Run(name, func(t *testing.T) {
			restore, err := UseKernel(name)
			require.NoError(t, err)
			defer restore()
			f(t)
		})
	}
}

// referenceSum is the tag computed by the generic code alone, block by
// block, without the dispatching Write.
func referenceSum(key *[KeySize]byte, msg []byte) [TagSize]byte {
	var st state
	st.init(key)
	full := len(msg) &^ (blockSize - 1)
	blocksGeneric(&st, msg[:full])
	if rest := msg[full:]; len(rest) > 0 {
		var last [blockSize]byte
		copy(last[:], rest)
		last[len(rest)] = 1
		st.block(&last, 0)
	}
	var tag [TagSize]byte
	st.finish(&tag)
	return tag
}

// reduce3 is reduce on an array, for tests.
func reduce3(h [3]uint64) [3]uint64 {
	h0, h1, h2 := reduce(h[0], h[1], h[2])
	return [3]uint64{h0, h1, h2}
}
