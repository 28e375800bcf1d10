package salsacore

import "github.com/spipe-dev/spipe/internal/impl"

//go:generate go run -C ../../asmgen ./salsa -out ../internal/salsacore/salsa_amd64.s -stubs ../internal/salsacore/salsa_stubs_amd64.go -pkg salsacore

// XORKeyStreamBlocks XORs len(src)/BlockSize keystream blocks into dst,
// starting at the block counter in s[8], and leaves s[8] advanced by that
// many blocks modulo 2^32. It never writes any other word of s: callers with
// a 64-bit counter split their calls where s[8] wraps and carry themselves.
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
var kernels = impl.New("salsacore")

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
