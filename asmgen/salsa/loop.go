package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// loop is a kernel's loop over its groups of blocks: every kernel starts
// with beginLoop, computes a group's key stream, and ends with endLoop.
type loop struct {
	name             string
	a                arx.Args
	top, done, short string
}

// beginLoop emits the top of the loop: straight to the end if there are no
// blocks, then the label each group starts at.
func beginLoop(name string, a arx.Args) loop {
	l := loop{name: name, a: a, top: name + "_batch", done: name + "_done", short: name + "_partial"}
	TESTQ(a.Blocks, a.Blocks)
	JZ(LabelRef(l.done))
	Label(l.top)
	return l
}

// endLoop emits the bottom of the loop and the return: output(false)
// writes a whole group of width blocks, then the pointers move on, next
// moves the counters on, and the loop goes round while blocks are left.
// With partial, a last group of fewer than width blocks goes instead to
// output(true), which stores only the blocks that a.Blocks says exist;
// without, len(src) is a multiple of the width. The counter word s[8]
// finally advances by the blocks of the call.
func (l loop) endLoop(isa arx.ISA, width int, partial bool, output func(guarded bool), next func()) {
	if partial {
		CMPQ(l.a.Blocks, U8(width))
		JB(LabelRef(l.short))
	}
	output(false)
	ADDQ(U32(64*width), l.a.Dst)
	ADDQ(U32(64*width), l.a.Src)
	next()
	SUBQ(U8(width), l.a.Blocks)
	JNZ(LabelRef(l.top))
	if partial {
		JMP(LabelRef(l.done))
		Label(l.short)
		Comment("Fewer blocks left than the width: store only those.")
		output(true)
	}
	Label(l.done)
	l.a.Finish(isa, 8)
}
