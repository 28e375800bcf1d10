package salsacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// FuzzKernelsMatchGeneric feeds random states, round counts, counters near
// or at the wrap of either word, lengths and buffer offsets to
// XORKeyStream on every kernel and compares its output and state with the
// generic kernel run block by block (kerneltest.MatchesGenericOnce). The
// offsets misalign src and dst independently, and inPlace aliases them.
func FuzzKernelsMatchGeneric(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint64(0), uint16(64), uint8(0), uint8(0), false)
	f.Add(uint64(2), uint8(0), uint64(0xfffffff0), uint16(40*64+7), uint8(3), uint8(5), false)
	f.Add(uint64(3), uint8(1), uint64(0x1ffffffff), uint16(17*64), uint8(63), uint8(1), true)
	f.Add(uint64(4), uint8(2), uint64(1<<64-3), uint16(255*64+63), uint8(7), uint8(9), false)
	f.Fuzz(func(t *testing.T, seed uint64, roundSel uint8, start uint64, length uint16, srcOff, dstOff uint8, inPlace bool) {
		rounds := []int{8, 12, 20}[int(roundSel)%3]
		kerneltest.MatchesGenericOnce(t, core, counter, XORKeyStream, seed, rounds, start, int(length), int(srcOff), int(dstOff), inPlace)
	})
}
