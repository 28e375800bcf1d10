package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// group is a group of key stream blocks computed in vector registers
// beside the rest of a kernel: its rounds, as lists of instructions the
// kernel interleaves with scalar work, its feed-forward and its output.
type group interface {
	// half returns the instructions of one round, the columns or (diag)
	// the diagonals, and those that realign the rows after it.
	half(diag bool) (round, realign []func())
	feedForward()
	// key returns block 0's first 32 bytes, the Poly1305 key, as r0, r1,
	// s0, s1, if the group holds block 0 (after feedForward).
	key() (r0, r1, s0, s1 GPVirtual, ok bool)
	// pieces hands emit the group's message key stream, piece by piece
	// (after feedForward); emit must be done with a piece's register
	// before it returns.
	pieces(emit func(piece))
}

// chachaRows is one set of ChaCha blocks in the row layout: each 128-bit
// lane of a, b, c, d holds one row of one block, so a round is the four
// quarter rounds side by side in the lanes. For the diagonal round the
// rows a, c and d are rotated (b stays: it is the last row a round
// finishes, so the next round's first addition does not wait for a
// shuffle), as in asmgen/chacha's rows.
type chachaRows struct {
	isa     arx.ISA
	first   int // block of lane 0, counted from s[12]
	lowLat  bool
	x, init [4]Register
	t1, t2  Register
}

// newChaChaRows loads the state at s for blocks first, first+1, ...;
// lowLat selects the 3-cycle step (one set on XMM or YMM, see
// asmgen/chacha's quarterRoundsLow).
func newChaChaRows(isa arx.ISA, s Mem, first int, lowLat bool) *chachaRows {
	r := &chachaRows{isa: isa, first: first, lowLat: lowLat}
	for k := range 4 {
		r.init[k] = isa.Vec()
		isa.BroadcastRow(r.init[k], s.Offset(16*k))
	}
	if first != 0 || isa.Bytes > 16 {
		isa.Add(r.init[3], arx.RowCounters(first, 1))
	}
	for k := range 4 {
		r.x[k] = isa.Vec()
		isa.Copy(r.x[k], r.init[k])
	}
	if lowLat {
		r.t1, r.t2 = isa.Vec(), isa.Vec()
	}
	return r
}

func (r *chachaRows) half(diag bool) (round, realign []func()) {
	x := r.x
	step := func(a, b, d, n int) []func() {
		if !r.lowLat {
			return []func(){
				func() { VPADDD(x[b], x[a], x[a]) },
				func() { VPXORD(x[a], x[d], x[d]) },
				func() { VPROLD(U8(n), x[d], x[d]) },
			}
		}
		return []func(){
			func() { VPROLD(U8(n), x[d], x[d]) },
			func() { VPADDD(x[b], x[a], x[a]) },
			func() { VPSLLD(U8(n), x[a], r.t1) },
			func() { VPSRLD(U8(32-n), x[a], r.t2) },
			func() { VPTERNLOGD(U8(0x96), r.t1, r.t2, x[d]) },
		}
	}
	round = append(round, step(0, 1, 3, 16)...)
	round = append(round, step(2, 3, 1, 12)...)
	round = append(round, step(0, 1, 3, 8)...)
	round = append(round, step(2, 3, 1, 7)...)
	// Lane j of b holds word 4+j; its diagonal is (j+3, 4+j, 8+(j+1)%4,
	// 12+(j+2)%4).
	na, nc := 3, 1
	if diag {
		na, nc = 1, 3
	}
	realign = []func(){
		func() { r.isa.Shuffle(x[0], x[0], arx.RotateLanes(na)) },
		func() { r.isa.Shuffle(x[2], x[2], arx.RotateLanes(nc)) },
		func() { r.isa.Shuffle(x[3], x[3], arx.RotateLanes(2)) },
	}
	return round, realign
}

func (r *chachaRows) feedForward() {
	for k := range 4 {
		r.isa.Add(r.x[k], r.init[k])
	}
}

func (r *chachaRows) key() (r0, r1, s0, s1 GPVirtual, ok bool) {
	if r.first != 0 {
		return nil, nil, nil, nil, false
	}
	return laneKey(r.x[0], r.x[1])
}

// laneKey extracts words 0-3 of lane 0 of a and b as r0, r1 and s0, s1.
func laneKey(a, b Register) (r0, r1, s0, s1 GPVirtual, ok bool) {
	r0, r1, s0, s1 = GP64(), GP64(), GP64(), GP64()
	xa, xb := a.(VecVirtual).AsX(), b.(VecVirtual).AsX()
	VMOVQ(xa, r0)
	VPEXTRQ(U8(1), xa, r1)
	VMOVQ(xb, s0)
	VPEXTRQ(U8(1), xb, s1)
	return r0, r1, s0, s1, true
}

func (r *chachaRows) pieces(emit func(piece)) {
	rowPieces(r.isa, r.x, r.first, 64, emit)
}

// rowPieces emits the message key stream of rows x (row m of the block
// first+l in 128-bit lane l): block b's 64 bytes are message bytes from
// 64·b - skip on (bytes before 0 are not message key stream: the
// Poly1305 key).
func rowPieces(isa arx.ISA, x [4]Register, first, skip int, emit func(piece)) {
	part := func(v Register, block, at, width int) {
		off := 64*block + at - skip
		switch {
		case off >= 0:
			emit(piece{v, off, width})
		case off+width > 0:
			panic("a piece across the key")
		}
	}
	switch isa.Bytes {
	case 16:
		for m := range 4 {
			part(x[m], first, 16*m, 16)
		}
	case 32:
		// Joined low and high lanes: bytes 0-31 and 32-63 of each block.
		for h := range 2 {
			lo, hi := YMM(), YMM()
			VSHUFI64X2(U8(0), x[2*h+1], x[2*h], lo)
			VSHUFI64X2(U8(3), x[2*h+1], x[2*h], hi)
			part(lo, first, 32*h, 32)
			part(hi, first+1, 32*h, 32)
		}
	case 64:
		blocks, _ := arx.Transpose128x4(x, ZMM())
		for l, v := range blocks {
			b := first + l
			switch {
			case 64*b >= skip:
				part(v, b, 0, 64)
			case 64*b+32 == skip:
				// block 0 of secretbox: its upper half is message key
				// stream
				y := YMM()
				VEXTRACTI64X4(U8(1), v, y)
				part(y, b, 32, 32)
			}
		}
	default:
		panic("rowPieces: a vector width")
	}
}
