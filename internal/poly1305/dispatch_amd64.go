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

//go:generate sh -c "cd ../../asmgen && go run ./poly1305 -out ../internal/poly1305/poly1305_amd64.s -stubs ../internal/poly1305/poly1305_stubs_amd64.go -pkg poly1305"

// The kernels' "Requires:" lines in poly1305_amd64.s list the extensions
// each uses; these gates cover them. x/sys/cpu reports AVX and AVX-512 only
// when the OS saves the wider registers, so no separate OS check.
func init() {
	hasAVX2 := cpu.X86.HasAVX && cpu.X86.HasAVX2
	kernels.Register(kernelScalar, "scalar", true)
	kernels.Register(kernelAVX2, "avx2", hasAVX2)
	kernels.Register(kernelIFMA, "avx512ifma", hasAVX2 && cpu.X86.HasAVX512F &&
		cpu.X86.HasAVX512VL && cpu.X86.HasAVX512IFMA && cpu.X86.HasBMI2)
}

// powers holds what the IFMA kernel derives from r: the powers r^1..r^16
// it multiplies by, computed by polyIFMAPowers on a MAC's first IFMA call
// and reused by the later ones (pkg/aead writes long messages in chunks).
// Computing them costs about as much as absorbing 256 bytes. Only their
// limbs are kept (408 bytes; the kernel derives the multiples of 20 it
// also needs), because Go zeroes every MAC it creates.
type powers struct {
	ifma  [51]uint64
	ready bool // ifma holds the powers of this MAC's r
}

// The AVX2 kernel absorbs 4 blocks per loop iteration and takes whole
// groups of 4; the IFMA kernel absorbs 16 (two accumulators of 8 lanes)
// and takes any number of blocks.
const avx2Stride = 4 * blockSize

// Below these lengths the vector kernels lose to the scalar one (about
// 0.47 ns per byte): they cost a fixed amount per call (about 40 ns for
// IFMA: the first group's masks, the last multiplication by the lanes'
// powers, combining the lanes), and IFMA's powers of r about 60 ns more,
// paid by a MAC's first IFMA call only. Measured as the fastest of
// repeated batches, per kernel call and through Sum.
const (
	ifmaMinBytes       = 384 // powers not yet computed
	ifmaCachedMinBytes = 112 // powers kept from an earlier Write
	avx2MinBytes       = 384
)

// maxCallBytes bounds one assembly call so that a goroutine reaches a
// preemption point every few microseconds.
const maxCallBytes = 64 * 1024

// updateBlocks absorbs whole blocks of msg (len(msg) a multiple of 16): the
// vector kernel takes whole groups of its width, the scalar one the rest.
// pw keeps the IFMA kernel's powers between calls; with pw nil (one-shot
// Sum) they live on the stack for this call only.
func updateBlocks(st *state, pw *powers, msg []byte) {
	switch kernels.Active() {
	case kernelIFMA:
		if len(msg) < ifmaMinBytes && (pw == nil || !pw.ready || len(msg) < ifmaCachedMinBytes) {
			polyScalar(&st.h, &st.r, msg)
			return
		}
		if pw == nil {
			// Declared here so that only this path pays for zeroing it.
			var own powers
			ifmaBlocks(st, &own, msg)
			return
		}
		ifmaBlocks(st, pw, msg)
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

// ifmaBlocks runs the IFMA kernel over msg, computing the powers of r into
// pw first if it does not hold them yet.
func ifmaBlocks(st *state, pw *powers, msg []byte) {
	if !pw.ready {
		polyIFMAPowers(&st.r, &pw.ifma)
		pw.ready = true
	}
	// The IFMA kernel takes any whole number of blocks: it pads its first
	// group in front with empty lanes.
	for len(msg) > 0 {
		n := min(len(msg), maxCallBytes)
		polyIFMA(&st.h, &pw.ifma, msg[:n])
		msg = msg[n:]
	}
}
