package chachacore

import "github.com/spipe-dev/spipe/internal/impl"

//go:generate go run -C ../../asmgen ./chacha -out ../internal/chachacore/chacha_amd64.s -stubs ../internal/chachacore/chacha_stubs_amd64.go -pkg chachacore

// XORKeyStreamBlocks XORs len(src)/BlockSize keystream blocks into dst,
// starting at the block counter in s[12], and leaves s[12] advanced by that
// many blocks modulo 2^32. It never writes any other word of s: callers with
// a 64-bit counter split their calls where s[12] wraps and carry themselves.
//
// len(src) must be a multiple of BlockSize and len(dst) >= len(src); dst and
// src may be the same slice but must not otherwise overlap. rounds is 8, 12
// or 20. Callers bound each call (see MaxCallBytes) because assembly kernels
// cannot be preempted.
func XORKeyStreamBlocks(s *State, rounds int, dst, src []byte) {
	// A switch of direct calls (see package impl): callers such as
	// pkg/aead may pass state and scratch blocks on their stack.
	if kernels.Active() == impl.Generic {
		xorBlocksGeneric(s, rounds, dst, src)
		return
	}
	xorArch(kernels.Active(), s, rounds, dst, src)
}

// MaxCallBytes bounds one call of XORKeyStreamBlocks, so that a goroutine
// inside an assembly kernel returns to a preemption point within tens of
// microseconds.
const MaxCallBytes = 64 * 1024

// kernels lists the implementations compiled in; the architecture files
// register theirs at init.
var kernels = impl.New("chachacore")

// Kernel names the implementation XORKeyStreamBlocks uses on this CPU.
func Kernel() string { return kernels.Name() }

// Kernels lists the implementations this CPU can run, best first, ending
// with "generic". For tests and diagnostics.
func Kernels() []string { return kernels.Names() }

// UseKernel makes XORKeyStreamBlocks use the named implementation until the
// returned function restores the previous one. It exists so tests can run
// every path the CPU supports; it is not safe to call while other goroutines
// generate key stream.
func UseKernel(name string) (restore func(), err error) { return kernels.Use(name) }

// XORKeyStreamHead writes the keystream block at the counter s[12] to head,
// then XORs the next len(src)/BlockSize blocks into dst, and leaves s[12]
// advanced by that many blocks plus one (modulo 2^32): the same as
// XORKeyStreamBlocks into a zeroed head followed by XORKeyStreamBlocks(s,
// rounds, dst, src), with the same rules for dst, src and rounds. head must
// not overlap dst or src.
//
// It exists for RFC 8439 AEADs, whose block 0 is the Poly1305 key: a lone
// block costs a whole kernel call of latency-bound rounds, and the AVX-512
// kernel computes it instead beside the first group of message blocks, in
// the gaps of their rounds, for nearly nothing.
func XORKeyStreamHead(s *State, rounds int, head *[BlockSize]byte, dst, src []byte) {
	if id := kernels.Active(); id != impl.Generic && headArch(id, s, rounds, head, dst, src) {
		return
	}
	*head = [BlockSize]byte{}
	XORKeyStreamBlocks(s, rounds, head[:], head[:])
	XORKeyStreamBlocks(s, rounds, dst, src)
}
