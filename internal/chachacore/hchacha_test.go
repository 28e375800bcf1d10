package chachacore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// TestHChaChaEveryKernel holds HChaCha to the published vectors and, on
// random keys and nonces at every round count, to the generic permutation,
// under every kernel: with a SIMD kernel active, HChaCha takes the block
// function from it and subtracts the input.
func TestHChaChaEveryKernel(t *testing.T) {
	var v testutil.XChaCha
	testutil.LoadVectors(t, "xchacha.json", &v)
	r := testutil.Rand(t)
	type input struct {
		key    [32]byte
		nonce  [16]byte
		rounds int
	}
	var inputs []input
	for range 40 {
		for _, rounds := range roundCounts {
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
		HChaCha(&want[i], &in.key, &in.nonce, in.rounds)
	}
	restore()

	core.ForEachKernel(t, func(t *testing.T) {
		testutil.CheckHashCases(t, v.HChaCha20, func(key, input []byte) ([]byte, error) {
			var out [32]byte
			HChaCha(&out, (*[32]byte)(key), (*[16]byte)(input), 20)
			return out[:], nil
		})
		for i, in := range inputs {
			var got [32]byte
			HChaCha(&got, &in.key, &in.nonce, in.rounds)
			assert.Equal(t, want[i], got, "input %d, %d rounds", i, in.rounds)
		}
	})
}
