package poly1305

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
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

// extremeState returns a state with a random clamped key and, by i, an
// accumulator at the edge of the range the kernels accept between calls
// (h[2] up to 5): all ones with h[2] = 5, p itself, random low words, or
// all ones with h[2] = 4 under the largest clamped r.
func extremeState(r *rand.Rand, i int) state {
	var st state
	st.init(randomKey(r))
	switch i % 4 {
	case 0:
		st.h = [3]uint64{^uint64(0), ^uint64(0), 5}
	case 1:
		st.h = [3]uint64{^uint64(0) - 4, ^uint64(0), 3} // p
	case 2:
		st.h = [3]uint64{r.Uint64(), r.Uint64(), uint64(r.IntN(6))}
	case 3:
		st.r = [2]uint64{rMask0, rMask1}
		st.h = [3]uint64{^uint64(0), ^uint64(0), 4}
	}
	return st
}

// checkEveryKernel runs absorb on a copy of st under each kernel and holds
// the accumulator within range and, reduced mod p, to want's. what
// describes the input for failure messages.
func checkEveryKernel(t *testing.T, st, want state, absorb func(*state), what string) {
	t.Helper()
	for _, name := range Kernels() {
		restore, err := UseKernel(name)
		require.NoError(t, err)
		got := st
		absorb(&got)
		restore()
		require.LessOrEqual(t, got.h[2], uint64(5), "%s: h[2] out of range", name)
		assert.Equal(t, reduce3(want.h), reduce3(got.h), "%s: start %x, %s", name, st.h, what)
	}
}
