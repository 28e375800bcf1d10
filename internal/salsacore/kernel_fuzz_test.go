package salsacore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzKernelsMatchGeneric feeds random states, round counts, counters near
// or at the wrap, block counts and buffer offsets to every supported kernel
// and compares dst and the state with the generic reference. The offsets
// misalign src and dst independently, and inPlace aliases them.
func FuzzKernelsMatchGeneric(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint32(0), uint8(1), uint8(0), uint8(0), false)
	f.Add(uint64(2), uint8(0), uint32(0xfffffff0), uint8(40), uint8(3), uint8(5), false)
	f.Add(uint64(3), uint8(1), uint32(0xffffffff), uint8(17), uint8(63), uint8(1), true)
	f.Add(uint64(4), uint8(2), uint32(12345), uint8(255), uint8(7), uint8(9), false)
	f.Fuzz(func(t *testing.T, seed uint64, roundSel uint8, ctr uint32, blocks, srcOff, dstOff uint8, inPlace bool) {
		rounds := []int{8, 12, 20}[int(roundSel)%3]
		s := testState(seed)
		s[8] = ctr
		n := int(blocks) * BlockSize
		src := randomBytes(n+int(srcOff), seed)[srcOff:]
		want := make([]byte, n)
		ref := s
		xorBlocksGeneric(&ref, rounds, want, src)

		for _, name := range Kernels() {
			restore, err := UseKernel(name)
			require.NoError(t, err)
			got := s
			var dst []byte
			if inPlace {
				dst = append(make([]byte, 0, n), src...)
				XORKeyStreamBlocks(&got, rounds, dst, dst)
			} else {
				dst = make([]byte, n+int(dstOff))[dstOff:]
				XORKeyStreamBlocks(&got, rounds, dst, src)
			}
			restore()
			require.Equal(t, want, dst, "kernel %s, rounds %d, %d blocks, counter %#x", name, rounds, blocks, ctr)
			require.Equal(t, ref, got, "kernel %s: state", name)
		}
	})
}
