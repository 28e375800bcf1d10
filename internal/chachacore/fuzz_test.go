package chachacore

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// FuzzKernelsMatchGeneric feeds random states, round counts, counters near
// or at the wrap, lengths and buffer offsets to XORKeyStream (the 32-bit
// counter) and XORKeyStream64 (the 64-bit one) on every kernel and
// compares their output and state with the generic kernel run block by
// block (kerneltest.MatchesGenericOnce). The offsets misalign src and dst
// independently, and inPlace aliases them.
func FuzzKernelsMatchGeneric(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint64(0), uint16(64), uint8(0), uint8(0), false)
	f.Add(uint64(2), uint8(0), uint64(0xfffffff0), uint16(1000), uint8(3), uint8(5), false)
	f.Add(uint64(3), uint8(1), uint64(0x1ffffffff), uint16(4096), uint8(63), uint8(1), true)
	f.Add(uint64(4), uint8(1), uint64(1<<64-2), uint16(4097), uint8(5), uint8(0), false)
	f.Fuzz(func(t *testing.T, seed uint64, roundSel uint8, start uint64, length uint16, srcOff, dstOff uint8, inPlace bool) {
		rounds := roundCounts[int(roundSel)%len(roundCounts)]
		n := int(length) % (8 << 10)
		kerneltest.MatchesGenericOnce(t, core, counter32, XORKeyStream, seed, rounds, uint64(uint32(start)), n, int(srcOff), int(dstOff), inPlace)
		kerneltest.MatchesGenericOnce(t, core, counter64, XORKeyStream64, seed, rounds, start, n, int(srcOff), int(dstOff), inPlace)
	})
}
