//go:build gc && !purego

package salsacore

import "golang.org/x/sys/cpu"

// The amd64 kernels, registered worst to best. Each tier pairs a vertical
// kernel (one state word per register across 4, 8 or 16 blocks) for long
// inputs with a diagonal-layout kernel whose cost is a single block's
// latency, for inputs shorter than a vertical batch.
func init() {
	// The SSE kernels use SSE2 instructions only; the tier carries the
	// SSSE3 name and gate of the matching ChaCha20 tier so that one name
	// describes a CPU class across both families.
	register(impl{name: "ssse3", xor: xorSSSE3, supported: cpu.X86.HasSSSE3})
	register(impl{name: "avx2", xor: xorAVX2, supported: cpu.X86.HasAVX2})
	// x/sys/cpu reports AVX-512 only when the OS saves the ZMM and mask
	// registers. The kernels use AVX-512F, and VL for the one-block path.
	register(impl{name: "avx512", xor: xorAVX512, supported: cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL})
}

// kernelFunc is the shape of every generated kernel: blocks > 0 whole
// blocks from src to dst, counter in s[8].
type kernelFunc func(s *[16]uint32, rounds int, dst, src *byte, blocks int)

// split runs the first full*batch blocks on the vertical kernel and the
// rest on short when at most shortMax remain; a longer remainder is cheaper
// as one more (partial) vertical batch.
func split(s *State, rounds int, dst, src []byte, batch, shortMax int, vertical, short kernelFunc) {
	n := len(src) / BlockSize
	if n == 0 {
		return
	}
	_ = dst[len(src)-1] // the kernels write len(src) bytes of dst
	rem := n % batch
	if rem == 0 || rem > shortMax {
		vertical(s, rounds, &dst[0], &src[0], n)
		return
	}
	if full := n - rem; full > 0 {
		vertical(s, rounds, &dst[0], &src[0], full)
		dst, src = dst[full*BlockSize:], src[full*BlockSize:]
	}
	short(s, rounds, &dst[0], &src[0], rem)
}

func xorSSSE3(s *State, rounds int, dst, src []byte) {
	split(s, rounds, dst, src, 4, 2, xorVerticalSSSE3, xorHorizontalSSSE3x1)
}

func xorAVX2(s *State, rounds int, dst, src []byte) {
	split(s, rounds, dst, src, 8, 2, xorVerticalAVX2, xorHorizontalAVX2x2)
}

func xorAVX512(s *State, rounds int, dst, src []byte) {
	if len(src) == BlockSize {
		// The lone block of a short message or a partial tail: the XMM
		// kernel avoids waking the 512-bit units for it.
		_ = dst[len(src)-1]
		xorHorizontalAVX512x1(s, rounds, &dst[0], &src[0], 1)
		return
	}
	split(s, rounds, dst, src, 16, 4, xorVerticalAVX512, xorHorizontalAVX512x4)
}
