package salsacore

import (
	"crypto/subtle"

	"github.com/spipe-dev/spipe/internal/impl"
)

//go:generate go run -C ../../asmgen ./salsa -out ../internal/salsacore/salsa_amd64.s -stubs ../internal/salsacore/salsa_stubs_amd64.go -pkg salsacore

// XORKeyStream XORs len(src) bytes of key stream into dst, starting at the
// 64-bit block counter in s[8] (low) and s[9] (high), and leaves the
// counter advanced by the blocks it used, ceil(len(src)/64), modulo 2^64:
// a last partial block's unused key stream is discarded. It writes no
// other word of s.
//
// src may have any length; dst must be at least as long (it panics
// otherwise, before writing anything) and may be src itself, but must not
// otherwise overlap it. rounds is 8, 12 or 20. Assembly cannot be
// preempted, so long inputs go to the kernels in calls of at most
// maxCallBytes.
func XORKeyStream(s *State, rounds int, dst, src []byte) {
	if len(dst) < len(src) {
		panic("salsacore: output smaller than input")
	}
	if len(src) == 0 {
		return // no kernel call for an empty rest (an AEAD has them often)
	}
	// One kernel call takes the usual case: whole blocks, no more than
	// one call may take, ending before s[8] wraps.
	if len(src)%BlockSize == 0 && len(src) <= maxCallBytes && uint64(len(src)/BlockSize) < 1<<32-uint64(s[8]) {
		if id := kernels.Active(); id != impl.Generic {
			xorBlocks(s, rounds, dst, src, id)
		} else {
			xorBlocksGeneric(s, rounds, dst, src)
		}
		return
	}
	xorSplit(s, rounds, dst, src)
}

// xorSplit is XORKeyStream in as many kernel calls as it takes.
func xorSplit(s *State, rounds int, dst, src []byte) {
	id := kernels.Active()
	for len(src) >= BlockSize {
		n := min(len(src), maxCallBytes) &^ (BlockSize - 1)
		// The kernels count modulo 2^32 in s[8]: a call ends where it
		// wraps, and the carry goes into s[9].
		if toWrap := (1<<32 - uint64(s[8])) * BlockSize; uint64(n) > toWrap {
			n = int(toWrap)
		}
		xorBlocks(s, rounds, dst[:n], src[:n], id)
		if s[8] == 0 {
			s[9]++
		}
		dst, src = dst[n:], src[n:]
	}
	// A partial last block takes a block of key stream of its own: the
	// diagonal kernels make one block cost a block's latency.
	if len(src) > 0 {
		var ks [BlockSize]byte
		xorBlocks(s, rounds, ks[:], ks[:], id)
		if s[8] == 0 {
			s[9]++
		}
		subtle.XORBytes(dst, src, ks[:])
	}
}

// maxCallBytes bounds one assembly call, so that a goroutine inside a
// kernel reaches a preemption point within tens of microseconds.
const maxCallBytes = 64 * 1024

// kernels lists the implementations compiled in; the architecture files
// register theirs at init.
var kernels = impl.New("salsacore")

// Kernel names the implementation XORKeyStream uses on this CPU.
func Kernel() string { return kernels.Name() }

// Kernels lists the implementations this CPU can run, best first, ending
// with "generic". For tests and diagnostics.
func Kernels() []string { return kernels.Names() }

// UseKernel makes XORKeyStream use the named implementation until the
// returned function restores the previous one. It exists so tests can run
// every path the CPU supports; it is not safe to call while other goroutines
// generate key stream.
func UseKernel(name string) (restore func(), err error) { return kernels.Use(name) }
