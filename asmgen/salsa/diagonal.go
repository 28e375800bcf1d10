package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// The diagonal layout keeps one block in four 128-bit rows
//
//	A = {x0, x5, x10, x15}  B = {x4, x9, x14, x3}
//	C = {x8, x13, x2, x7}   D = {x12, x1, x6, x11}
//
// so that lane k of (A, B, C, D) is the k-th column quarter round. Rotating
// the lanes of D, C and B by one, two and three words turns them into the
// row quarter rounds (A, D', C', B'). Diagonal k takes lane i from matrix
// row (k+i) mod 4, and matrix row m takes lane i from diagonal (m-i) mod 4.
// The block counter, x8, is the first word of C.
const dA, dB, dC, dD = 0, 1, 2, 3

// diagonals emits a kernel in the diagonal layout for short inputs: each
// 128-bit lane holds one block, so a vector of n bytes holds n/16 blocks,
// and sets independent groups of vectors are interleaved (a second group
// fills the ports the first leaves idle while it waits on its one
// dependency chain, so twice the blocks cost little more than one group).
// Its cost is about one block's latency, however few blocks. It takes any
// number of blocks: a last group smaller than the width stores only the
// blocks asked for.
func diagonals(name string, isa arx.ISA, sets int) {
	if sets != 1 && sets != 2 {
		panic("diagonals: one set or two")
	}
	k := newDiagonalKernel(name, isa, sets)
	k.loadDiagonals()

	l := beginLoop(name, k.a)
	for set := range sets {
		for w := range 4 {
			move(k.isa, k.x[set][w], k.orig[set][w])
		}
	}
	k.rounds()
	Comment("Feed forward, then back to matrix rows and out, group by group.")
	for set := range sets {
		for w := range 4 {
			isa.Add(k.x[set][w], k.orig[set][w])
		}
	}
	l.endLoop(isa, k.width, k.width > 1, k.output, k.stepCounters)
}

// diagonalKernel is the register budget of one diagonal-layout kernel.
type diagonalKernel struct {
	name             string
	isa              arx.ISA
	lowLat           bool // one XMM or YMM set: stepLow
	sets, per, width int
	a                arx.Args
	x                [][4]Register // per set: A, B, C, D
	orig             [][4]Op       // per set: the input diagonals, for the feed-forward
	t, u             []Register    // per set: a step's scratch
	rows             [4]Register   // the matrix rows, on the way in and out
	blendMasks       [3]Register   // AVX-512: the lanes VPBLENDMD takes from its second source
}

// newDiagonalKernel declares the kernel, loads its arguments and lays out
// its registers. The input diagonals take four registers a set; where
// sixteen registers do not hold them beside everything else (SSSE3, whose
// blends need four masks and a temporary beside the rows and diagonals;
// AVX2 with two sets) they live in the frame.
func newDiagonalKernel(name string, isa arx.ISA, sets int) *diagonalKernel {
	per := isa.Bytes / 16
	k := &diagonalKernel{name: name, isa: isa, sets: sets, per: per, width: per * sets,
		lowLat: isa.EVEX && isa.Bytes < 64 && sets == 1}
	TEXT(name, 0, arx.Signature)
	Pragma("noescape")
	if sets == 1 {
		Doc(fmt.Sprintf("%s XORs len(src)/64 Salsa20 blocks into dst, %d at a time in the", name, k.width),
			fmt.Sprintf("diagonal layout (%s); a last group of fewer blocks stores only those.", isa.Name))
	} else {
		Doc(fmt.Sprintf("%s XORs len(src)/64 Salsa20 blocks into dst, %d at a time as two interleaved", name, k.width),
			fmt.Sprintf("%d-block groups in the diagonal layout (%s); a last group of fewer blocks stores only those.", per, isa.Name))
	}
	k.a = arx.LoadArgs()

	inFrame := !isa.EVEX && (!isa.VEX || sets > 1)
	var slots []Mem
	if inFrame {
		slots = arx.NewFrame(isa, 4*sets).Slots(4 * sets)
	}
	var t, u Register
	if !isa.EVEX {
		t, u = isa.Vec(), isa.Vec() // shared by the sets
	}
	for set := range sets {
		var x [4]Register
		var orig [4]Op
		for w := range 4 {
			x[w] = isa.Vec()
			if inFrame {
				orig[w] = slots[4*set+w]
			} else {
				orig[w] = isa.Vec()
			}
		}
		k.x = append(k.x, x)
		k.orig = append(k.orig, orig)
		if isa.EVEX {
			t = isa.Vec()
			u = t // VPROLD needs no second scratch
			if k.lowLat {
				u = isa.Vec()
			}
		}
		k.t, k.u = append(k.t, t), append(k.u, u)
	}
	for m := range k.rows {
		k.rows[m] = isa.Vec()
	}
	if isa.EVEX {
		for lane, m := range []int{0x2222, 0x4444, 0x8888} {
			g := GP32()
			MOVL(U32(m), g)
			k.blendMasks[lane] = K()
			KMOVW(g, k.blendMasks[lane])
		}
	}
	return k
}

// loadDiagonals blends the matrix rows of s into the diagonals of the first
// set, gives each set its blocks' counters and keeps the result as the
// input diagonals.
func (k *diagonalKernel) loadDiagonals() {
	isa := k.isa
	Comment("Load the matrix rows and blend them into diagonals.")
	rows := k.rows
	for m := range 4 {
		isa.BroadcastRow(rows[m], k.a.S.Offset(16*m))
	}
	masks := k.loadMasks()
	x0 := k.x[0]
	for w := range 4 {
		k.blend(x0[w], [4]Register{rows[w], rows[(w+1)%4], rows[(w+2)%4], rows[(w+3)%4]}, masks)
	}
	// Lane L of set s is block per*s+L: add that to its counter word. The
	// last set first, so that the first set's C can change in place.
	for set := k.sets - 1; set > 0; set-- {
		isa.Add3(k.x[set][dC], x0[dC], arx.RowCounters(set*k.per, 1))
	}
	if k.per > 1 {
		isa.Add(x0[dC], arx.RowCounters(0, 1))
	}
	for set := range k.sets {
		for w := range 4 {
			from := x0[w]
			if w == dC {
				from = k.x[set][dC]
			}
			move(k.isa, k.orig[set][w], from)
		}
	}
}

// rounds emits the double rounds, step by step across the sets.
func (k *diagonalKernel) rounds() {
	dr := GP64()
	MOVQ(k.a.Rounds, dr)
	steps := func(x, y, z, n int) {
		for set, d := range k.x {
			if k.lowLat {
				stepLow(d[x], d[y], d[z], k.t[set], k.u[set], n)
				continue
			}
			step(k.isa, d[x], d[y], d[z], k.t[set], k.u[set], n)
		}
	}
	rotate := func(w, n int) {
		for _, d := range k.x {
			k.isa.Shuffle(d[w], d[w], arx.RotateLanes(n))
		}
	}
	Label(k.label("double"))
	// The column round's quarter rounds are (A, B, C, D) lane by lane.
	// Rotating D, C and B by one, two and three lanes lines up the row
	// round's as (A, D, C, B); rotating them by three, two and one puts
	// the rows back.
	for h, q := range [][4]int{{dA, dB, dC, dD}, {dA, dD, dC, dB}} {
		for i, st := range quarterSteps(q) {
			steps(st[0], st[1], st[2], rotations[i])
		}
		rotate(dD, 1+2*h)
		rotate(dC, 2)
		rotate(dB, 3-2*h)
	}
	DECQ(dr)
	JNZ(LabelRef(k.label("double")))
}

// output blends each set's diagonals back into matrix rows (row m of block
// L in lane L) and XORs the blocks into dst; guarded stores only the blocks
// that a.Blocks says exist.
func (k *diagonalKernel) output(guarded bool) {
	isa := k.isa
	masks := k.loadMasks()
	for set, x := range k.x {
		rows := k.rows
		for m := range 4 {
			k.blend(rows[m], [4]Register{x[m], x[(m+3)%4], x[(m+2)%4], x[(m+1)%4]}, masks)
		}
		first := set * k.per
		switch k.per {
		case 1:
			for m := range 4 {
				k.a.XorBlock(isa, first, 16*m, rows[m], guarded)
			}
		case 2:
			for h := range 2 {
				lo, hi := isa.Vec(), isa.Vec()
				arx.JoinLow(lo, rows[2*h], rows[2*h+1])
				arx.JoinHigh(hi, rows[2*h], rows[2*h+1])
				k.a.XorBlock(isa, first, 32*h, lo, guarded)
				k.a.XorBlock(isa, first+1, 32*h, hi, guarded)
			}
		case 4:
			blocks, _ := arx.Transpose128x4(rows, isa.Vec())
			for l := range 4 {
				k.a.XorBlock(isa, first+l, 0, blocks[l], guarded)
			}
		}
	}
}

// stepCounters moves every set's input counters on by the width.
func (k *diagonalKernel) stepCounters() {
	step := arx.RowCounters(k.width, 0)
	for set, orig := range k.orig {
		if m, ok := orig[dC].(Mem); ok {
			move(k.isa, k.t[set], m)
			k.isa.Add(k.t[set], step)
			move(k.isa, m, k.t[set])
			continue
		}
		k.isa.Add(orig[dC].(Register), step)
	}
}

// blend emits out = lane i of srcs[i] in every 128-bit lane, which moves
// words between matrix rows and diagonals. SSSE3 has no blend instruction:
// it masks each source (masks from loadMasks) and ORs them together.
func (k *diagonalKernel) blend(out Register, srcs [4]Register, masks []Register) {
	switch {
	case k.isa.EVEX:
		VPBLENDMD(srcs[1], srcs[0], k.blendMasks[0], out)
		VPBLENDMD(srcs[2], out, k.blendMasks[1], out)
		VPBLENDMD(srcs[3], out, k.blendMasks[2], out)
	case k.isa.VEX:
		VPBLENDD(U8(0x22), srcs[1], srcs[0], out)
		VPBLENDD(U8(0x44), srcs[2], out, out)
		VPBLENDD(U8(0x88), srcs[3], out, out)
	default:
		tmp := k.isa.Vec()
		MOVO(srcs[0], out)
		PAND(masks[0], out)
		for i := 1; i < 4; i++ {
			MOVO(srcs[i], tmp)
			PAND(masks[i], tmp)
			POR(tmp, out)
		}
	}
}

// loadMasks loads, for SSSE3, the four one-lane masks blend works with;
// the other ISAs need none.
func (k *diagonalKernel) loadMasks() []Register {
	if k.isa.VEX {
		return nil
	}
	masks := make([]Register, 4)
	for i := range masks {
		masks[i] = k.isa.Vec()
		MOVOU(laneMasks().Offset(16*i), masks[i])
	}
	return masks
}

// label returns a label name unique to this kernel.
func (k *diagonalKernel) label(s string) string { return k.name + "_" + s }

// laneMasks is the table of the four one-lane masks SSSE3 blends with:
// mask k is all ones in 32-bit lane k.
func laneMasks() Mem {
	var m [16]uint32
	for k := range 4 {
		m[5*k] = 0xffffffff
	}
	return arx.Words("lanemasks_salsa", m)
}
