package chachacore

import (
	"encoding/binary"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRFC8439QuarterRound checks quarterRound on RFC 8439 sections 2.1.1
// (four words) and 2.2.1 (applied to the indices of a whole state).
func TestRFC8439QuarterRound(t *testing.T) {
	var v testutil.RFC8439
	testutil.LoadVectors(t, "rfc8439.json", &v)
	require.NotEmpty(t, v.QuarterRound)
	require.NotEmpty(t, v.QuarterRoundOnState)

	for _, c := range v.QuarterRound {
		require.Len(t, c.Input, 4, c.ID)
		require.Len(t, c.Output, 4, c.ID)
		a, b, cc, d := quarterRound(uint32(c.Input[0]), uint32(c.Input[1]), uint32(c.Input[2]), uint32(c.Input[3]))
		assert.Equal(t, [4]uint32{uint32(c.Output[0]), uint32(c.Output[1]), uint32(c.Output[2]), uint32(c.Output[3])},
			[4]uint32{a, b, cc, d}, c.ID)
	}
	for _, c := range v.QuarterRoundOnState {
		require.Len(t, c.Input, 16, c.ID)
		require.Len(t, c.Output, 16, c.ID)
		require.Len(t, c.Indices, 4, c.ID)
		var x, want State
		for i := range x {
			x[i], want[i] = uint32(c.Input[i]), uint32(c.Output[i])
		}
		i0, i1, i2, i3 := c.Indices[0], c.Indices[1], c.Indices[2], c.Indices[3]
		x[i0], x[i1], x[i2], x[i3] = quarterRound(x[i0], x[i1], x[i2], x[i3])
		assert.Equal(t, want, x, c.ID)
	}
}

// TestRFC8439BlockFunction checks XORKeyStream, on every kernel this
// CPU runs, against the serialized blocks of RFC 8439 sections 2.3.2 and
// A.1: XORed into zeros, one block must equal the keystream, and the low
// counter word must advance by exactly one while no other word changes.
func TestRFC8439BlockFunction(t *testing.T) {
	var v testutil.RFC8439
	testutil.LoadVectors(t, "rfc8439.json", &v)
	require.NotEmpty(t, v.Block)

	core.ForEachKernel(t, func(t *testing.T) {
		for _, c := range v.Block {
			var s State
			Init(&s, c.Key, c.Nonce)
			require.Less(t, c.Counter, uint64(1<<32), "%s: RFC 8439 counters are 32-bit", c.ID)
			s[12] = uint32(c.Counter)
			before := s
			got := make([]byte, BlockSize)
			XORKeyStream(&s, 20, got, got)
			assert.Equal(t, []byte(c.Keystream), got, c.ID)

			want := before
			want[12]++
			assert.Equal(t, want, s, "%s: state after one block", c.ID)
		}
	})
}

// TestHChaChaVectors checks HChaCha with 20 rounds against
// draft-irtf-cfrg-xchacha-03 section 2.2.1 and libsodium's tv_hchacha20.
func TestHChaChaVectors(t *testing.T) {
	var v testutil.XChaCha
	testutil.LoadVectors(t, "xchacha.json", &v)
	testutil.CheckHashCases(t, v.HChaCha20, func(key, input []byte) ([]byte, error) {
		var out [32]byte
		HChaCha(&out, (*[32]byte)(key), (*[16]byte)(input), 20)
		return out[:], nil
	})
}

// TestRFC8439BlockLayout checks Init's state layout against the example
// state of RFC 8439 section 2.3.2 (constants, key words, counter, nonce).
func TestRFC8439BlockLayout(t *testing.T) {
	key := testutil.MustHex(t, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	nonce := testutil.MustHex(t, "000000090000004a00000000")
	var s State
	Init(&s, key, nonce)
	s[12] = 1
	// RFC 8439 section 2.3.2, "ChaCha state with the key setup".
	want := State{
		0x61707865, 0x3320646e, 0x79622d32, 0x6b206574,
		0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c,
		0x13121110, 0x17161514, 0x1b1a1918, 0x1f1e1d1c,
		0x00000001, 0x09000000, 0x4a000000, 0x00000000,
	}
	assert.Equal(t, want, s)
	assert.Equal(t, binary.LittleEndian.Uint32(key), s[4])
}
