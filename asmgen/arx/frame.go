package arx

import (
	"fmt"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
)

// Frame is a 64-byte aligned stack area of vector slots, one vector of the
// ISA's width each. Kernels keep there what does not fit in registers:
// broadcast input words for the feed-forward (an aligned, full-width
// memory operand folds into an addition, even on SSSE3), precomputed
// words, counters and spilled state words. The alignment keeps every slot
// within one cache line.
type Frame struct {
	isa     ISA
	Base    operand.Mem // the first slot; Base.Base is its register
	next, n int
}

// NewFrame reserves n vector slots; [Frame.Slots] hands them out.
func NewFrame(isa ISA, n int) *Frame {
	local := build.AllocLocal(n*isa.Bytes + 64)
	p := build.GP64()
	build.LEAQ(local, p)
	build.ADDQ(operand.U8(63), p)
	build.ANDQ(operand.I8(-64), p)
	return &Frame{isa: isa, Base: operand.Mem{Base: p}, n: n}
}

// Slots returns the next n slots.
func (f *Frame) Slots(n int) []operand.Mem {
	if f.next+n > f.n {
		panic(fmt.Sprintf("arx: %d more slots asked of a %d-slot frame with %d left", n, f.n, f.n-f.next))
	}
	m := make([]operand.Mem, n)
	for k := range m {
		m[k] = f.Base.Offset(f.next * f.isa.Bytes)
		f.next++
	}
	return m
}
