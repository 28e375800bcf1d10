package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// chachaVertical is 16 ChaCha blocks in the vertical layout on ZMM, as in
// asmgen/chacha's chachaAVX512x16: register i holds word i of blocks
// first..first+15, one per 32-bit lane, so a round is four quarter rounds
// on whole registers and VPROLD does every rotation. It keeps nothing but
// its 16 words in registers: the feed-forward adds the input words as
// broadcast memory operands, and the per-lane counters wait in the frame,
// so that the rest of a kernel has the other half of the registers.
type chachaVertical struct {
	first int
	x     [16]Register
	ctr   Mem // the per-lane block counters
}

// newChaChaVertical loads the state at s for blocks first..first+15.
func newChaChaVertical(s Mem, first int) *chachaVertical {
	v := &chachaVertical{first: first, ctr: AllocLocal(64)}
	for i := range v.x {
		v.x[i] = ZMM()
		VPBROADCASTD(s.Offset(4*i), v.x[i])
	}
	VPADDD(arx.LaneIndex(), v.x[12], v.x[12])
	if first != 0 {
		VPADDD(arx.Splat(first), v.x[12], v.x[12])
	}
	VMOVDQU32(v.x[12], v.ctr)
	return v
}

func (v *chachaVertical) half(diag bool) (round, realign []func()) {
	q := columns
	if diag {
		q = diagonals
	}
	x := v.x
	step := func(a, b, d, n int) {
		for _, qr := range q {
			qr := qr
			round = append(round, func() { VPADDD(x[qr[b]], x[qr[a]], x[qr[a]]) })
		}
		for _, qr := range q {
			qr := qr
			round = append(round, func() { VPXORD(x[qr[a]], x[qr[d]], x[qr[d]]) })
		}
		for _, qr := range q {
			qr := qr
			round = append(round, func() { VPROLD(U8(n), x[qr[d]], x[qr[d]]) })
		}
	}
	// (a, b, c, d) = 0, 1, 2, 3 of each quarter round
	step(0, 1, 3, 16)
	step(2, 3, 1, 12)
	step(0, 1, 3, 8)
	step(2, 3, 1, 7)
	return round, nil
}

// feedForward needs the state pointer again: a kernel that computes a
// block in general registers beside the rounds has none to keep it in.
func (v *chachaVertical) feedForward() {
	s := Mem{Base: Load(Param("s"), GP64())}
	for i := range v.x {
		if i == 12 {
			VPADDD(v.ctr, v.x[i], v.x[i])
			continue
		}
		VPADDD_BCST(s.Offset(4*i), v.x[i], v.x[i])
	}
}

func (v *chachaVertical) key() (r0, r1, s0, s1 GPVirtual, ok bool) {
	return nil, nil, nil, nil, false
}

// pieces: block b of the group is message key stream from 64·(first+b-1).
func (v *chachaVertical) pieces(emit func(piece)) {
	for b, blk := range arx.Transpose16(arx.AVX512, v.x[:]) {
		emit(piece{blk, 64 * (v.first + b - 1), 64})
	}
}
