package salsacore

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func words(t *testing.T, ws []testutil.Word, n int) State {
	t.Helper()
	require.Len(t, ws, n)
	var s State
	for i, w := range ws {
		s[i] = uint32(w)
	}
	return s
}

// rowRound and columnRound are the specification's definitions, written
// here from the spec (not from permute) on top of quarterRound, so the
// spec's rowround and columnround examples test quarterRound's wiring into
// each round shape.
func rowRound(y State) State {
	var z State
	z[0], z[1], z[2], z[3] = quarterRound(y[0], y[1], y[2], y[3])
	z[5], z[6], z[7], z[4] = quarterRound(y[5], y[6], y[7], y[4])
	z[10], z[11], z[8], z[9] = quarterRound(y[10], y[11], y[8], y[9])
	z[15], z[12], z[13], z[14] = quarterRound(y[15], y[12], y[13], y[14])
	return z
}

func columnRound(x State) State {
	var y State
	y[0], y[4], y[8], y[12] = quarterRound(x[0], x[4], x[8], x[12])
	y[5], y[9], y[13], y[1] = quarterRound(x[5], x[9], x[13], x[1])
	y[10], y[14], y[2], y[6] = quarterRound(x[10], x[14], x[2], x[6])
	y[15], y[3], y[7], y[11] = quarterRound(x[15], x[3], x[7], x[11])
	return y
}

// TestSpecRoundFunctions checks the spec's quarterround, rowround,
// columnround and doubleround examples; doubleround goes through permute,
// the loop the generic kernel, Core and HSalsa share.
func TestSpecRoundFunctions(t *testing.T) {
	var v testutil.SalsaSpec
	testutil.LoadVectors(t, "salsa20_spec.json", &v)
	require.NotEmpty(t, v.QuarterRound)
	require.NotEmpty(t, v.RowRound)
	require.NotEmpty(t, v.ColumnRound)
	require.NotEmpty(t, v.DoubleRound)

	for i, c := range v.QuarterRound {
		require.Len(t, c.Input, 4)
		require.Len(t, c.Output, 4)
		a, b, cc, d := quarterRound(uint32(c.Input[0]), uint32(c.Input[1]), uint32(c.Input[2]), uint32(c.Input[3]))
		assert.Equal(t, [4]uint32{uint32(c.Output[0]), uint32(c.Output[1]), uint32(c.Output[2]), uint32(c.Output[3])},
			[4]uint32{a, b, cc, d}, "quarterround example %d", i)
	}
	for i, c := range v.RowRound {
		assert.Equal(t, words(t, c.Output, 16), rowRound(words(t, c.Input, 16)), "rowround example %d", i)
	}
	for i, c := range v.ColumnRound {
		assert.Equal(t, words(t, c.Output, 16), columnRound(words(t, c.Input, 16)), "columnround example %d", i)
	}
	for i, c := range v.DoubleRound {
		x := words(t, c.Input, 16)
		permute(&x, 2)
		assert.Equal(t, words(t, c.Output, 16), x, "doubleround example %d", i)
	}
}

// TestSpecLittleEndian checks that Init reads key words little-endian, with
// the spec's littleendian examples as the first key word.
func TestSpecLittleEndian(t *testing.T) {
	var v testutil.SalsaSpec
	testutil.LoadVectors(t, "salsa20_spec.json", &v)
	require.NotEmpty(t, v.LittleEndian)
	for i, c := range v.LittleEndian {
		require.Len(t, c.Input, 4)
		key := make([]byte, 32)
		copy(key, c.Input)
		var s State
		Init(&s, key, make([]byte, 8))
		assert.Equal(t, uint32(c.Output), s[1], "littleendian example %d", i)
	}
}

// TestSpecCore checks Core with 20 rounds on the spec's "Salsa20 hash"
// examples, both into a separate block and in place.
func TestSpecCore(t *testing.T) {
	var v testutil.SalsaSpec
	testutil.LoadVectors(t, "salsa20_spec.json", &v)
	require.NotEmpty(t, v.Core)
	for i, c := range v.Core {
		checkCore(t, c, 20, "spec core example %d", i)
	}
}

func checkCore(t *testing.T, c testutil.BlockCase, rounds int, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	require.Len(t, c.Input, 64)
	var in, out [64]byte
	copy(in[:], c.Input)
	Core(&out, &in, rounds)
	assert.Equal(t, []byte(c.Output), out[:], msg)
	Core(&in, &in, rounds)
	assert.Equal(t, []byte(c.Output), in[:], "in place: "+msg)
}

// TestSpecExpansion checks the spec's Salsa20 expansion examples (16- and
// 32-byte keys) through Init and XORKeyStream on every kernel: the
// 16-byte input n is the nonce followed by the little-endian block counter.
func TestSpecExpansion(t *testing.T) {
	var v testutil.SalsaSpec
	testutil.LoadVectors(t, "salsa20_spec.json", &v)
	require.Len(t, v.Expansion, 2)
	core.ForEachKernel(t, func(t *testing.T) {
		for i, c := range v.Expansion {
			require.Len(t, c.NonceAndCounter, 16)
			var s State
			Init(&s, c.Key, c.NonceAndCounter[:8])
			ctr := binary.LittleEndian.Uint64(c.NonceAndCounter[8:])
			s[8], s[9] = uint32(ctr), uint32(ctr>>32)
			before := s
			got := make([]byte, BlockSize)
			XORKeyStream(&s, 20, got, got)
			assert.Equal(t, []byte(c.Output), got, "expansion example %d (%d-byte key)", i, len(c.Key))

			want := before // only the counter moves
			want[8], want[9] = uint32(ctr+1), uint32((ctr+1)>>32)
			assert.Equal(t, want, s, "expansion example %d: state after one block", i)
		}
	})
}

// TestReducedCore checks Core with the round count of each reduced-round
// core case (Salsa20/8 of RFC 7914).
func TestReducedCore(t *testing.T) {
	var v testutil.SalsaStreams
	testutil.LoadVectors(t, "salsa20_reduced.json", &v)
	require.NotEmpty(t, v.Core)
	for _, c := range v.Core {
		checkCore(t, c.BlockCase, c.Rounds, "%s", c.ID)
	}
}

// TestHSalsaVectors checks HSalsa with 20 rounds on NaCl's core1, core2 and
// core5 examples.
func TestHSalsaVectors(t *testing.T) {
	var v testutil.XSalsa20
	testutil.LoadVectors(t, "xsalsa20.json", &v)
	testutil.CheckHashCases(t, v.HSalsa20, func(key, input []byte) ([]byte, error) {
		var out [32]byte
		HSalsa(&out, (*[32]byte)(key), (*[16]byte)(input), 20)
		return out[:], nil
	})
}
