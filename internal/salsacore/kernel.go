package salsacore

import "fmt"

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
	// A switch of direct calls rather than a function value: escape
	// analysis can then see that no kernel keeps its pointers, so callers
	// such as pkg/aead may pass state and scratch blocks on their stack.
	if active.id == genericKernel {
		xorBlocksGeneric(s, rounds, dst, src)
		return
	}
	xorArch(active.id, s, rounds, dst, src)
}

// MaxCallBytes bounds one call of XORKeyStreamBlocks, so that a goroutine
// inside an assembly kernel returns to a preemption point within tens of
// microseconds.
const MaxCallBytes = 64 * 1024

// Kernel names the implementation XORKeyStreamBlocks uses on this CPU.
func Kernel() string { return active.name }

// kernelID names an implementation for the dispatch switch; the
// architecture files define theirs above genericKernel and route them in
// xorArch.
type kernelID uint8

const genericKernel kernelID = 0

// impl is one implementation of XORKeyStreamBlocks.
type impl struct {
	name      string
	id        kernelID
	supported bool // this CPU (and OS) can run it
}

// impls lists every implementation compiled in, best first; the generic one
// is last and always supported. Architecture files prepend theirs at init.
var impls = []impl{{name: "generic", id: genericKernel, supported: true}}

// active is the implementation in use: the best supported one.
var active = impls[0]

// register adds an assembly implementation in front of the list (callers
// register from worst to best) and re-selects the best supported one. It is
// called only from init functions.
func register(i impl) {
	impls = append([]impl{i}, impls...)
	for _, c := range impls {
		if c.supported {
			active = c
			return
		}
	}
}

// Kernels lists the implementations this CPU can run, best first, ending
// with "generic". For tests and diagnostics.
func Kernels() []string {
	var names []string
	for _, i := range impls {
		if i.supported {
			names = append(names, i.name)
		}
	}
	return names
}

// UseKernel makes XORKeyStreamBlocks use the named implementation until the
// returned function restores the previous one. It exists so tests can run
// every path the CPU supports; it is not safe to call while other goroutines
// generate key stream.
func UseKernel(name string) (restore func(), err error) {
	for _, i := range impls {
		if i.name == name {
			if !i.supported {
				return nil, fmt.Errorf("salsacore: kernel %q is not supported on this CPU", name)
			}
			prev := active
			active = i
			return func() { active = prev }, nil
		}
	}
	return nil, fmt.Errorf("salsacore: no kernel named %q", name)
}
