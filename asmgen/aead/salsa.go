package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// salsaDiagonals is one set of Salsa20 blocks in the diagonal layout of
// asmgen/salsa (one block per 128-bit lane in the rows
// A = {x0, x5, x10, x15}, B = {x4, x9, x14, x3}, C = {x8, x13, x2, x7},
// D = {x12, x1, x6, x11}, so that lane k of (A, B, C, D) is the k-th
// column quarter round; rotating D, C and B by one, two and three lanes
// lines up the row round as (A, D, C, B)). Blocks go in and out through
// masked blends between matrix rows and diagonals.
type salsaDiagonals struct {
	isa     arx.ISA
	first   int
	lowLat  bool
	x, orig [4]Register
	t, u    Register
	masks   [3]Op
}

// newSalsaDiagonals loads the state at s for blocks first, first+1, ...;
// lowLat selects the 3-cycle step (one set on XMM or YMM, see
// asmgen/salsa's stepLow).
func newSalsaDiagonals(isa arx.ISA, s Mem, first int, lowLat bool, masks [3]Op) *salsaDiagonals {
	d := &salsaDiagonals{isa: isa, first: first, lowLat: lowLat, masks: masks}
	var rows [4]Register
	for m := range rows {
		rows[m] = isa.Vec()
		isa.BroadcastRow(rows[m], s.Offset(16*m))
	}
	// diagonal w takes lane i from matrix row (w+i) mod 4
	for w := range 4 {
		d.orig[w] = isa.Vec()
		d.blend(d.orig[w], [4]Register{rows[w], rows[(w+1)%4], rows[(w+2)%4], rows[(w+3)%4]})
	}
	// the block counter is the first word of C
	isa.Add(d.orig[2], arx.RowCounters(first, 1))
	for w := range 4 {
		d.x[w] = isa.Vec()
		isa.Copy(d.x[w], d.orig[w])
	}
	d.t, d.u = isa.Vec(), isa.Vec()
	return d
}

// blendMasks returns the masks of lanes 1, 2 and 3 of every 128-bit lane,
// which the blends between matrix rows and diagonals take from their
// second source; the sets of a kernel share them.
func blendMasks() [3]Op {
	var masks [3]Op
	for lane, m := range []int{0x2222, 0x4444, 0x8888} {
		g := GP32()
		MOVL(U32(m), g)
		k := K()
		KMOVW(g, k)
		masks[lane] = k
	}
	return masks
}

// blend sets out = lane i of srcs[i] in every 128-bit lane.
func (d *salsaDiagonals) blend(out Register, srcs [4]Register) {
	VPBLENDMD(srcs[1], srcs[0], d.masks[0], out)
	VPBLENDMD(srcs[2], out, d.masks[1], out)
	VPBLENDMD(srcs[3], out, d.masks[2], out)
}

// The rotations of a quarter round's four steps.
var salsaRotations = [4]int{7, 9, 13, 18}

func (d *salsaDiagonals) half(diag bool) (round, realign []func()) {
	const A, B, C, D = 0, 1, 2, 3
	q := [4]int{A, B, C, D}
	if diag {
		q = [4]int{A, D, C, B}
	}
	a, b, c, dd := q[0], q[1], q[2], q[3]
	// dst ^= (x + y) <<< n
	for i, st := range [4][3]int{{b, a, dd}, {c, b, a}, {dd, c, b}, {a, dd, c}} {
		dst, x, y, n := d.x[st[0]], d.x[st[1]], d.x[st[2]], salsaRotations[i]
		if d.lowLat {
			round = append(round,
				func() { VPADDD(y, x, d.t) },
				func() { VPSLLD(U8(n), d.t, d.u) },
				func() { VPSRLD(U8(32-n), d.t, d.t) },
				func() { VPTERNLOGD(U8(0x96), d.u, d.t, dst) })
			continue
		}
		round = append(round,
			func() { VPADDD(y, x, d.t) },
			func() { VPROLD(U8(n), d.t, d.t) },
			func() { VPXORD(d.t, dst, dst) })
	}
	nd, nb := 1, 3
	if diag {
		nd, nb = 3, 1
	}
	realign = []func(){
		func() { d.isa.Shuffle(d.x[D], d.x[D], arx.RotateLanes(nd)) },
		func() { d.isa.Shuffle(d.x[C], d.x[C], arx.RotateLanes(2)) },
		func() { d.isa.Shuffle(d.x[B], d.x[B], arx.RotateLanes(nb)) },
	}
	return round, realign
}

func (d *salsaDiagonals) feedForward() {
	for w := range 4 {
		d.isa.Add(d.x[w], d.orig[w])
	}
	// back to matrix rows: row m takes lane i from diagonal (m-i) mod 4
	var rows [4]Register
	for m := range rows {
		rows[m] = d.isa.Vec()
		d.blend(rows[m], [4]Register{d.x[m], d.x[(m+3)%4], d.x[(m+2)%4], d.x[(m+1)%4]})
	}
	d.x = rows
}

func (d *salsaDiagonals) key() (r0, r1, s0, s1 GPVirtual, ok bool) {
	if d.first != 0 {
		return nil, nil, nil, nil, false
	}
	return laneKey(d.x[0], d.x[1])
}

// pieces: secretbox's message key stream starts at byte 32 of block 0.
func (d *salsaDiagonals) pieces(emit func(piece)) {
	rowPieces(d.isa, d.x, d.first, 32, emit)
}
