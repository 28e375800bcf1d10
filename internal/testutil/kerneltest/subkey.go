package kerneltest

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SubkeyFunc is a core's HChaCha or HSalsa: the 32-byte subkey of key and a
// 16-byte nonce after rounds rounds.
type SubkeyFunc func(out *[32]byte, key *[32]byte, nonce *[16]byte, rounds int)

// EverySubkeyKernel holds a subkey function, under every kernel of c, to
// the published vectors (20 rounds) and, on random keys and nonces at every
// round count, to what it gives under the generic kernel. With a SIMD
// kernel active the cores take the subkey from the block function and
// subtract the input, so each kernel is a path of its own.
func EverySubkeyKernel(t *testing.T, c Core, subkey SubkeyFunc, vectors []testutil.HashCase) {
	r := testutil.Rand(t)
	type input struct {
		key    [32]byte
		nonce  [16]byte
		rounds int
	}
	var inputs []input
	for range 40 {
		for _, rounds := range []int{8, 12, 20} {
			in := input{rounds: rounds}
			copy(in.key[:], testutil.Bytes(r, 32))
			copy(in.nonce[:], testutil.Bytes(r, 16))
			inputs = append(inputs, in)
		}
	}
	restore, err := c.Switch.Use("generic")
	require.NoError(t, err)
	want := make([][32]byte, len(inputs))
	for i, in := range inputs {
		subkey(&want[i], &in.key, &in.nonce, in.rounds)
	}
	restore()

	c.ForEachKernel(t, func(t *testing.T) {
		testutil.CheckHashCases(t, vectors, func(key, input []byte) ([]byte, error) {
			var out [32]byte
			subkey(&out, (*[32]byte)(key), (*[16]byte)(input), 20)
			return out[:], nil
		})
		for i, in := range inputs {
			var got [32]byte
			subkey(&got, &in.key, &in.nonce, in.rounds)
			assert.Equal(t, want[i], got, "input %d, %d rounds", i, in.rounds)
		}
	})
}
