package salsacore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// TestHSalsaEveryKernel holds HSalsa to the published vectors and, on
// random keys and nonces at every round count, to the generic permutation,
// under every kernel: with a SIMD kernel active, HSalsa takes the block
// function from it and subtracts the input.
func TestHSalsaEveryKernel(t *testing.T) {
	var v testutil.XSalsa20
	testutil.LoadVectors(t, "xsalsa20.json", &v)
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
	restore, err := UseKernel("generic")
	require.NoError(t, err)
	want := make([][32]byte, len(inputs))
	for i, in := range inputs {
		HSalsa(&want[i], &in.key, &in.nonce, in.rounds)
	}
	restore()

	core.ForEachKernel(t, func(t *testing.T) {
		testutil.CheckHashCases(t, v.HSalsa20, func(key, input []byte) ([]byte, error) {
			var out [32]byte
			HSalsa(&out, (*[32]byte)(key), (*[16]byte)(input), 20)
			return out[:], nil
		})
		for i, in := range inputs {
			var got [32]byte
			HSalsa(&got, &in.key, &in.nonce, in.rounds)
			assert.Equal(t, want[i], got, "input %d, %d rounds", i, in.rounds)
		}
	})
}
