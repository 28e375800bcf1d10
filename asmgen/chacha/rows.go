package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// rows emits a kernel in the row ("horizontal") layout for short inputs:
// each 128-bit lane holds one row of one block, so a block is four registers
// a, b, c, d and the four quarter rounds of a column round run side by side
// in the lanes. For the diagonal round the rows are rotated so the diagonals
// line up in the lanes. Usually b is rotated; here a, c and d are, and b
// stays: b is the last row a round finishes, so the next round's first
// addition (a += b) does not wait for a shuffle of b, which takes one cycle
// off each round's dependency chain. A vector of n bytes holds n/16 blocks;
// sets independent groups of vectors are interleaved. The kernel takes any
// number of blocks; a last group smaller than the width stores only the
// blocks asked for.
func rows(name string, isa arx.ISA, sets int) {
	per := isa.Bytes / 16
	width := per * sets
	TEXT(name, 0, arx.Signature)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs len(src)/64 ChaCha blocks into dst, %d at a time in the", name, width),
		fmt.Sprintf("row layout (%s); a last group of fewer blocks stores only those.", isa.Name))
	a := arx.LoadArgs()

	init := make([]Register, 3)
	for k := range init {
		init[k] = isa.Vec()
		isa.BroadcastRow(init[k], a.S.Offset(16*k))
	}
	ctr := make([]Register, sets)
	for set := range ctr {
		ctr[set] = isa.Vec()
		isa.BroadcastRow(ctr[set], a.S.Offset(48))
		if set > 0 || per > 1 {
			isa.Add(ctr[set], arx.RowCounters(set*per, 1))
		}
	}

	loop, done, partial := name+"_loop", name+"_done", name+"_partial"
	Label(loop)
	CMPQ(a.Blocks, U8(0))
	JE(LabelRef(done))

	x := make([][4]Register, sets)
	var tmp []Register
	// One set on XMM or YMM is a single latency-bound chain: the
	// low-latency step pays there (quarterRoundsLow).
	lowLat := isa.EVEX && isa.Bytes < 64 && sets == 1
	var t1, t2 []Register
	for set := range x {
		for k := range 3 {
			x[set][k] = isa.Vec()
			isa.Copy(x[set][k], init[k])
		}
		x[set][3] = isa.Vec()
		isa.Copy(x[set][3], ctr[set])
		if !isa.EVEX {
			tmp = append(tmp, isa.Vec())
		}
		if lowLat {
			t1, t2 = append(t1, isa.Vec()), append(t2, isa.Vec())
		}
	}
	qr := func() {
		if lowLat {
			quarterRoundsLow(x, t1, t2)
			return
		}
		quarterRounds(isa, x, tmp)
	}
	shuffle := func(na, nc, nd int) {
		for _, q := range x {
			isa.Shuffle(q[0], q[0], arx.RotateLanes(na))
			isa.Shuffle(q[2], q[2], arx.RotateLanes(nc))
			isa.Shuffle(q[3], q[3], arx.RotateLanes(nd))
		}
	}
	rounds := GP64()
	MOVQ(a.Rounds, rounds)
	Label(name + "_rounds")
	qr()
	// Lane j of b holds word 4+j; its diagonal is (j+3, 4+j, 8+(j+1)%4,
	// 12+(j+2)%4).
	shuffle(3, 1, 2)
	qr()
	shuffle(1, 3, 2)
	DECQ(rounds)
	JNZ(LabelRef(name + "_rounds"))

	for set, q := range x {
		for k := range 3 {
			isa.Add(q[k], init[k])
		}
		isa.Add(q[3], ctr[set])
	}

	if width > 1 {
		CMPQ(a.Blocks, U8(width))
		JB(LabelRef(partial))
	}
	outputRows(isa, a, x, false)
	ADDQ(U32(64*width), a.Src)
	ADDQ(U32(64*width), a.Dst)
	SUBQ(U8(width), a.Blocks)
	for set := range ctr {
		isa.Add(ctr[set], arx.RowCounters(width, 0))
	}
	JMP(LabelRef(loop))

	if width > 1 {
		Label(partial)
		Comment("Fewer blocks left than the width: store only those.")
		outputRows(isa, a, x, true)
	}

	Label(done)
	a.Finish(isa, 12)
}

// outputRows XORs the row-layout key stream of x (rows of per blocks per
// set) into dst. With guarded set, a block is stored only if a.blocks says
// it exists.
func outputRows(isa arx.ISA, a arx.Args, x [][4]Register, guarded bool) {
	per := isa.Bytes / 16
	store := func(block, offset int, v Register) { a.XorBlock(isa, block, offset, v, guarded) }
	for set, q := range x {
		first := set * per
		switch per {
		case 1:
			for k := range 4 {
				store(first, 16*k, q[k])
			}
		case 2:
			lo0, lo1 := isa.Vec(), isa.Vec()
			arx.JoinLow(lo0, q[0], q[1])
			arx.JoinLow(lo1, q[2], q[3])
			arx.JoinHigh(q[0], q[0], q[1])
			arx.JoinHigh(q[2], q[2], q[3])
			store(first, 0, lo0)
			store(first, 32, lo1)
			store(first+1, 0, q[0])
			store(first+1, 32, q[2])
		case 4:
			out, _ := arx.Transpose128x4(q, isa.Vec())
			for l := range 4 {
				store(first+l, 0, out[l])
			}
		}
	}
}
