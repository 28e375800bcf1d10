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

// kernelFunc is the shape of the diagonal-layout kernels: blocks > 0 whole
// blocks from src to dst, counter in s[8].
type kernelFunc func(s *[16]uint32, rounds int, dst, src *byte, blocks int)

// verticalFunc is the shape of the vertical kernels, which also take the
// counter-independent part of the first round (see firstRound).
type verticalFunc func(s, pre *[16]uint32, rounds int, dst, src *byte, blocks int)

// firstRound returns the outputs of the three quarter rounds of the first
// column round that do not read the block counter (word 8): they are the
// same for every block, so the vertical kernels start from them. Words 0, 4,
// 8 and 12 are left zero; the kernels take those from s.
func firstRound(s *State) (pre State) {
	pre[5], pre[9], pre[13], pre[1] = quarterRound(s[5], s[9], s[13], s[1])
	pre[10], pre[14], pre[2], pre[6] = quarterRound(s[10], s[14], s[2], s[6])
	pre[15], pre[3], pre[7], pre[11] = quarterRound(s[15], s[3], s[7], s[11])
	return pre
}

// plan splits n > 0 blocks between a tier's vertical kernel (batches of
// batch blocks) and its diagonal one: the diagonal kernel takes a remainder
// of at most shortMax blocks, and a longer one is cheaper as one more,
// partial, vertical batch. The thresholds come from timing both kernels on
// 1 to 16 blocks: a diagonal batch costs about one block's latency, a
// vertical batch its full throughput cost whatever the count. The kernels are then called directly (not
// through function values) so that firstRound's result stays on the stack.
func plan(n, batch, shortMax int) (vertical, short int) {
	rem := n % batch
	if rem == 0 || rem > shortMax {
		return n, 0
	}
	return n - rem, rem
}

func xorSSSE3(s *State, rounds int, dst, src []byte) {
	n := len(src) / BlockSize
	if n == 0 {
		return
	}
	_ = dst[len(src)-1] // the kernels write len(src) bytes of dst
	v, short := plan(n, 4, 1)
	if v > 0 {
		pre := firstRound(s)
		xorVerticalSSSE3(s, &pre, rounds, &dst[0], &src[0], v)
	}
	if short > 0 {
		xorHorizontalSSSE3x1(s, rounds, &dst[v*BlockSize], &src[v*BlockSize], short)
	}
}

func xorAVX2(s *State, rounds int, dst, src []byte) {
	n := len(src) / BlockSize
	if n == 0 {
		return
	}
	_ = dst[len(src)-1]
	v, short := plan(n, 8, 2)
	if v > 0 {
		pre := firstRound(s)
		xorVerticalAVX2(s, &pre, rounds, &dst[0], &src[0], v)
	}
	if short > 0 {
		xorHorizontalAVX2x2(s, rounds, &dst[v*BlockSize], &src[v*BlockSize], short)
	}
}

func xorAVX512(s *State, rounds int, dst, src []byte) {
	n := len(src) / BlockSize
	if n == 0 {
		return
	}
	_ = dst[len(src)-1]
	if n == 1 {
		// The lone block of a short message or a partial tail: the XMM
		// kernel avoids waking the 512-bit units for it.
		xorHorizontalAVX512x1(s, rounds, &dst[0], &src[0], 1)
		return
	}
	pre := firstRound(s)
	// Batches of 32 on the two-state kernel, the rest as for the other
	// tiers: 16-block batches (the last one partial), or up to 8 blocks on
	// the diagonal kernels: 4 blocks cost half a 16-block batch, 8 blocks
	// (two interleaved groups) two thirds.
	done := n &^ 31
	if done > 0 {
		xorVertical32AVX512(s, &pre, rounds, &dst[0], &src[0], done)
		if done == n {
			return
		}
	}
	v, short := plan(n-done, 16, 8)
	if v > 0 {
		xorVerticalAVX512(s, &pre, rounds, &dst[done*BlockSize], &src[done*BlockSize], v)
	}
	done += v
	switch {
	case short > 4:
		xorHorizontalAVX512x8(s, rounds, &dst[done*BlockSize], &src[done*BlockSize], short)
	case short > 0:
		xorHorizontalAVX512x4(s, rounds, &dst[done*BlockSize], &src[done*BlockSize], short)
	}
}
