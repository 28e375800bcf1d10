package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// scalarHead computes one ChaCha block (the head block of vertical32Head)
// in general registers, beside a vector kernel's rounds: scalar additions,
// XORs and rotations run on ports the ZMM instructions leave idle, where
// the same block in a vector row would take a third as many vector
// instructions again as the 16-block group.
//
// Fourteen words live in the fourteen allocatable general registers for
// the whole of the rounds; words 10 and 11, which only ever play the c
// part of a quarter round (c += d; b ^= c), stay in memory, where those are
// a read-modify-write and a memory operand. Everything else the kernel
// keeps in general registers is parked on the stack meanwhile.
type scalarHead struct {
	hp           Register
	in, mem, out Mem // the input words, words 10 and 11, the result
	parked       []Register
	slots        Mem
	x            [16]Op
}

// newScalarHead copies the 16 words of s to the stack as the head block's
// input and moves the counter in s on by one, for the message blocks.
func newScalarHead(a arx.Args) *scalarHead {
	h := &scalarHead{hp: Load(Param("head"), GP64())}
	h.in, h.mem, h.out = AllocLocal(64), AllocLocal(8), AllocLocal(64)
	v := ZMM()
	VMOVDQU32(a.S, v)
	VMOVDQU32(v, h.in)
	INCL(a.S.Offset(48))
	return h
}

// begin parks regs on the stack and loads the head block's words.
func (h *scalarHead) begin(regs ...Register) {
	h.parked = append(regs, h.hp)
	h.slots = AllocLocal(8 * len(h.parked))
	for i, r := range h.parked {
		MOVQ(r, h.slots.Offset(8*i))
	}
	t := GP32()
	for k, i := range []int{10, 11} {
		MOVL(h.in.Offset(4*i), t)
		MOVL(t, h.mem.Offset(4*k))
		h.x[i] = h.mem.Offset(4 * k)
	}
	for i := range 16 {
		if i != 10 && i != 11 {
			r := GP32()
			MOVL(h.in.Offset(4*i), r)
			h.x[i] = r
		}
	}
}

// half emits the four quarter rounds of half (columns or diagonals) step
// by step across them, so the four chains sit side by side.
func (h *scalarHead) half(half [4][4]int) {
	rot := func(r Op, n int) { ROLL(U8(n), r) }
	steps := []func(a, b, c, d Op){
		func(a, b, c, d Op) { ADDL(b, a) },
		func(a, b, c, d Op) { XORL(a, d) },
		func(a, b, c, d Op) { rot(d, 16) },
		func(a, b, c, d Op) { ADDL(d, c) },
		func(a, b, c, d Op) { XORL(c, b) },
		func(a, b, c, d Op) { rot(b, 12) },
		func(a, b, c, d Op) { ADDL(b, a) },
		func(a, b, c, d Op) { XORL(a, d) },
		func(a, b, c, d Op) { rot(d, 8) },
		func(a, b, c, d Op) { ADDL(d, c) },
		func(a, b, c, d Op) { XORL(c, b) },
		func(a, b, c, d Op) { rot(b, 7) },
	}
	for _, step := range steps {
		for _, q := range half {
			step(h.x[q[0]], h.x[q[1]], h.x[q[2]], h.x[q[3]])
		}
	}
}

// double emits one double round.
func (h *scalarHead) double() {
	h.half(columns)
	h.half(diagonals)
}

// end adds the input words, restores the parked registers and writes the
// block to head.
func (h *scalarHead) end() {
	for i := range 16 {
		if r, ok := h.x[i].(Register); ok {
			ADDL(h.in.Offset(4*i), r)
			MOVL(r, h.out.Offset(4*i))
		}
	}
	t := GP32()
	for k, i := range []int{10, 11} {
		MOVL(h.mem.Offset(4*k), t)
		ADDL(h.in.Offset(4*i), t)
		MOVL(t, h.out.Offset(4*i))
	}
	for i, r := range h.parked {
		MOVQ(h.slots.Offset(8*i), r)
	}
	v := ZMM()
	VMOVDQU32(h.out, v)
	VMOVDQU32(v, Mem{Base: h.hp})
}
