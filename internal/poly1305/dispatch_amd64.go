//go:build gc && !purego

package poly1305

import (
	"golang.org/x/sys/cpu"

	"github.com/spipe-dev/spipe/internal/impl"
)

// The assembly implementations of updateBlocks, registered worst to best.
const (
	kernelScalar impl.ID = impl.Generic + 1 + iota // 64-bit MULQ, one block at a time
	kernelAVX2                                     // radix 2^26, 4 blocks per YMM
	kernelIFMA                                     // radix 2^44, AVX-512 IFMA
)

// The kernels' "Requires:" lines in poly1305_amd64.s list the extensions
// each uses; these gates cover them. x/sys/cpu reports AVX and AVX-512 only
// when the OS saves the wider registers, so no separate OS check.
func init() {
	hasAVX2 := cpu.X86.HasAVX && cpu.X86.HasAVX2
	kernels.Register(kernelScalar, "scalar", true)
	kernels.Register(kernelAVX2, "avx2", hasAVX2)
	kernels.Register(kernelIFMA, "avx512ifma", hasAVX2 && cpu.X86.HasAVX512F &&
		cpu.X86.HasAVX512VL && cpu.X86.HasAVX512IFMA && cpu.X86.HasAVX512VBMI2 &&
		cpu.X86.HasBMI2)
}

// The AVX2 kernel absorbs 4 blocks per loop iteration and takes whole
// groups of 4; the IFMA kernel absorbs 16 (two accumulators of 8 lanes)
// and takes any number of blocks.
const avx2Stride = 4 * blockSize

// Below these lengths the vector kernels lose to the scalar one (about
// 0.47 ns per byte): they cost a fixed amount per call (for IFMA the
// powers of r, the first group's masks, the last multiplication by the
// lanes' powers and combining the lanes). The IFMA kernel, which computes
// its powers in the same call, wins from 256 bytes on (256 B 137 ns
// against 153, 384 B 162 against 226, with a tail block; paired in one
// process), and 256 is also the least it takes: it reads its first group
// from msg[0:256] (see polyIFMA in asmgen/poly1305/ifma.go). AVX2 was
// measured as the fastest of repeated batches, per kernel call and through
// Sum.
const (
	ifmaMinBytes = 256
	avx2MinBytes = 384
)

// The IFMA kernel must never get less than 256 bytes.
const _ = uint(ifmaMinBytes - 256)

// maxCallBytes bounds one assembly call so that a goroutine reaches a
// preemption point every few microseconds.
const maxCallBytes = 64 * 1024

// updateBlocks absorbs whole blocks of msg (len(msg) a multiple of 16): the
// vector kernel takes whole groups of its width, the scalar one the rest.
func updateBlocks(st *state, msg []byte) {
	switch kernels.Active() {
	case kernelIFMA:
		if len(msg) < ifmaMinBytes {
			polyScalar(&st.h, &st.r, msg)
			return
		}
		ifmaBlocks(st, msg)
	case kernelAVX2:
		if len(msg) >= avx2MinBytes {
			for len(msg) >= avx2Stride {
				n := min(len(msg), maxCallBytes) &^ (avx2Stride - 1)
				polyAVX2(&st.h, &st.r, msg[:n])
				msg = msg[n:]
			}
		}
		polyScalar(&st.h, &st.r, msg)
	case kernelScalar:
		for len(msg) > 0 {
			n := min(len(msg), maxCallBytes)
			polyScalar(&st.h, &st.r, msg[:n])
			msg = msg[n:]
		}
	default:
		blocksGeneric(st, msg)
	}
}

// updateBlocksTail absorbs the whole blocks of msg and then those of tail
// (len(tail) a multiple of 16, a few blocks at most): the IFMA kernel
// takes tail in the same call, after its vector groups.
func updateBlocksTail(st *state, msg, tail []byte) {
	if kernels.Active() != kernelIFMA || len(msg) < ifmaMinBytes {
		updateBlocks(st, msg)
		updateBlocks(st, tail)
		return
	}
	for len(msg) > maxCallBytes {
		n := ifmaCallBytes(len(msg))
		polyIFMA(&st.h, &st.r, msg[:n], nil)
		msg = msg[n:]
	}
	polyIFMA(&st.h, &st.r, msg, tail)
}

// ifmaBlocks runs the IFMA kernel over msg, which computes the powers of r
// it needs in each call (in its own frame, which Go does not zero). It
// takes any whole number of blocks: it pads its first group in front with
// empty lanes.
func ifmaBlocks(st *state, msg []byte) {
	for len(msg) > 0 {
		n := ifmaCallBytes(len(msg))
		polyIFMA(&st.h, &st.r, msg[:n], nil)
		msg = msg[n:]
	}
}

// ifmaCallBytes is how many of n bytes (n >= ifmaMinBytes, a multiple of
// 16) the next IFMA kernel call takes: at most maxCallBytes, but never so
// many that fewer than ifmaMinBytes are left for the last call, which
// reads its first 256 bytes whole when it stages its first group.
func ifmaCallBytes(n int) int {
	switch {
	case n <= maxCallBytes:
		return n
	case n-maxCallBytes < ifmaMinBytes:
		return n - ifmaMinBytes
	}
	return maxCallBytes
}
