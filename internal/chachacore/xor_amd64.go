//go:build gc && !purego

package chachacore

import (
	"golang.org/x/sys/cpu"

	"github.com/spipe-dev/spipe/internal/impl"
)

// The kernels' "Requires:" lines in chacha_amd64.s list the extensions each
// uses; these gates must cover them. x/sys/cpu reports AVX and AVX-512 only
// when the OS saves the wider registers (XCR0), so no separate OS check.
var (
	hasSSSE3  = cpu.X86.HasSSSE3
	hasAVX2   = cpu.X86.HasAVX && cpu.X86.HasAVX2
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && hasAVX2
)

// The amd64 kernel tiers, in the order they are registered.
const (
	ssse3Kernel impl.ID = impl.Generic + 1 + iota
	avx2Kernel
	avx512Kernel
)

// xorBlocks XORs len(src)/BlockSize key stream blocks into dst with
// implementation id, one kernel call (the callers bound its length),
// starting at the block counter and advancing its low word modulo 2^32:
// the kernels' contract, under which no other word of s changes. The
// kernels trust the lengths, so a caller's broken promise (len(dst) >=
// len(src)) panics here rather than writing past the end of dst.
//
// It is a switch of direct calls (see package impl): callers such as
// pkg/aead pass state and scratch blocks on their stack. id comes last so
// that XORKeyStream passes its own arguments on in the registers they
// came in.
func xorBlocks(s *State, rounds int, dst, src []byte, id impl.ID) {
	if len(dst) < len(src) {
		panic("chachacore: output smaller than input")
	}
	switch id {
	case avx512Kernel:
		xorAVX512(s, rounds, dst, src)
	case avx2Kernel:
		xorAVX2(s, rounds, dst, src)
	case ssse3Kernel:
		xorSSSE3(s, rounds, dst, src)
	case impl.Generic:
		xorBlocksGeneric(s, rounds, dst, src)
	default:
		panic("chachacore: unknown kernel")
	}
}

// Registered worst to best: the last supported one becomes active.
func init() {
	kernels.Register(ssse3Kernel, "ssse3", hasSSSE3)
	kernels.Register(avx2Kernel, "avx2", hasAVX2)
	kernels.Register(avx512Kernel, "avx512", hasAVX512)
}

// xorAVX512 runs the bulk through two interleaved 16-block sets, a rest of
// more than 8 blocks through one 16-block set, and shorter inputs through
// the row-layout kernels, whose latency-bound rounds cost the same for 1 to
// 4 blocks (8 with two sets) instead of paying for 16.
func xorAVX512(s *State, rounds int, dst, src []byte) {
	if n := len(src) &^ (32*BlockSize - 1); n > 0 {
		chachaAVX512x32(s, rounds, dst[:n], src[:n])
		dst, src = dst[n:], src[n:]
	}
	switch n := len(src) / BlockSize; {
	case n > 8:
		chachaAVX512x16(s, rounds, dst, src)
	case n > 4:
		chachaAVX512x8(s, rounds, dst, src)
	case n > 2:
		chachaAVX512x4(s, rounds, dst, src)
	case n == 2:
		chachaAVX512x2(s, rounds, dst, src)
	case n == 1:
		chachaAVX512x1(s, rounds, dst, src)
	}
}

// headFused reports whether kernel id takes the head beside the first
// group (see headArch).
func headFused(id impl.ID) bool { return id == avx512Kernel }

// headArch computes XORKeyStreamHead's head block inside a kernel call
// where the kernel has one, with the first message blocks, and returns how
// many message bytes it took (none without such a kernel): the AVX-512
// 16-block kernel takes the head beside the first group when there are at
// least 9 message blocks (a group costs the same for 9 to 16). With fewer,
// a row kernel for the head and one for the message cost less than a whole
// group.
func headArch(id impl.ID, s *State, rounds int, head *[BlockSize]byte, dst, src []byte) int {
	if !headFused(id) || len(src) < 9*BlockSize {
		return 0
	}
	n := min(len(src), 16*BlockSize) &^ (BlockSize - 1)
	chachaAVX512x16h(s, rounds, dst[:n], src[:n], head)
	return n
}

// xorAVX2 runs whole and partial groups of 8 through the vertical kernel and
// inputs of up to 4 blocks through the 2-block row kernel.
func xorAVX2(s *State, rounds int, dst, src []byte) {
	if len(src) > 4*BlockSize {
		chachaAVX2x8(s, rounds, dst, src)
		return
	}
	chachaAVX2x2(s, rounds, dst, src)
}

// xorSSSE3 runs groups of 4 through the vertical kernel and a single block
// through the row kernel.
func xorSSSE3(s *State, rounds int, dst, src []byte) {
	if len(src) > BlockSize {
		chachaSSSE3x4(s, rounds, dst, src)
		return
	}
	chachaSSSE3x1(s, rounds, dst, src)
}
