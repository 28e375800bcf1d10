package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

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

// genHorizontal emits xorHorizontal<ISA>x<per>: per blocks (1, 2 or 4) per
// iteration, one block per 128-bit lane in the diagonal layout. It is the
// short-input path: its cost is one block's latency, however few blocks.
func genHorizontal(i isa, per int) {
	w := 16 * per
	a := i.ops(w)
	name := fmt.Sprintf("xorHorizontal%sx%d", i, per)
	TEXT(name, NOSPLIT, "func(s *[16]uint32, rounds int, dst, src *byte, blocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs blocks key stream blocks into dst, %d at a time in the diagonal layout (%s).", name, per, i))

	s, dst, src, blocks := reg.RSI, reg.RDI, reg.RDX, reg.RCX
	rounds, dr, base := reg.R8, reg.R9, reg.R10
	Load(Param("s"), s)
	Load(Param("rounds"), rounds)
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("blocks"), blocks)

	v := func(k int) reg.VecPhysical { return vec(w, k) }
	four := func(a, b, c, d int) [4]reg.VecPhysical { return [4]reg.VecPhysical{v(a), v(b), v(c), v(d)} }
	x := four(0, 1, 2, 3) // A, B, C, D
	t, u := v(4), v(5)    // round scratch
	rows := four(10, 11, 12, 13)
	var orig [4]Op // the input diagonals, kept for the feed forward
	if i == sse {
		// SSE needs all sixteen registers for the blends; the input
		// diagonals live on an aligned stack slot instead.
		local := AllocLocal(64 + 16)
		LEAQ(local, base)
		ADDQ(U8(15), base)
		ANDQ(I8(-16), base)
		for k := range 4 {
			orig[k] = Mem{Base: base, Disp: 16 * k}
		}
	} else {
		for k := range 4 {
			orig[k] = v(6 + k)
		}
	}
	// copyVec moves a vector between registers or to and from orig.
	copyVec := func(src, dst Op) {
		switch {
		case i == sse:
			MOVO(src, dst)
		case isMem(dst):
			a.Store(dst.(Mem), src.(reg.Register))
		default:
			a.Copy(dst.(reg.Register), src.(reg.Register))
		}
	}

	// The blends that move words between the matrix rows and the
	// diagonals. SSE has no blend instruction: it masks and ORs.
	if i == avx512 {
		for lane, m := range []int{0x2222, 0x4444, 0x8888} {
			MOVL(U32(m), reg.EAX)
			KMOVW(reg.EAX, []reg.OpmaskPhysical{reg.K1, reg.K2, reg.K3}[lane])
		}
	}
	blend := func(out reg.VecPhysical, srcs [4]reg.VecPhysical, mregs [4]reg.VecPhysical, tmp reg.VecPhysical) {
		switch i {
		case sse:
			MOVO(srcs[0], out)
			PAND(mregs[0], out)
			for k := 1; k < 4; k++ {
				MOVO(srcs[k], tmp)
				PAND(mregs[k], tmp)
				POR(tmp, out)
			}
		case avx2:
			VPBLENDD(U8(0x22), srcs[1], srcs[0], out)
			VPBLENDD(U8(0x44), srcs[2], out, out)
			VPBLENDD(U8(0x88), srcs[3], out, out)
		case avx512:
			VPBLENDMD(srcs[1], srcs[0], reg.K1, out)
			VPBLENDMD(srcs[2], out, reg.K2, out)
			VPBLENDMD(srcs[3], out, reg.K3, out)
		}
	}
	loadMasks := func(mregs [4]reg.VecPhysical) {
		if i == sse {
			for k := range 4 {
				MOVOU(laneMasks().Offset(16*k), mregs[k])
			}
		}
	}

	Comment("Load the matrix rows and blend them into diagonals.")
	for m := range 4 {
		a.BroadcastRow(rows[m], Mem{Base: s, Disp: 16 * m})
	}
	smask := four(6, 7, 8, 9) // SSE: masks while the diagonals are built
	loadMasks(smask)
	for k := range 4 {
		blend(x[k], [4]reg.VecPhysical{rows[k], rows[(k+1)%4], rows[(k+2)%4], rows[(k+3)%4]}, smask, t)
	}
	if per > 1 {
		// Lane L is block L: add L to its counter word (lane 0 of C).
		a.Add(x[2], counterSteps(per, false))
	}
	for k := range 4 {
		copyVec(x[k], orig[k])
	}

	TESTQ(blocks, blocks)
	JZ(LabelRef(name + "_done"))
	Label(name + "_batch")
	for k := range 4 {
		copyVec(orig[k], x[k])
	}
	MOVQ(rounds, dr)
	SHRQ(U8(1), dr)
	A, B, C, D := x[0], x[1], x[2], x[3]
	rotate := func(r reg.Register, n int) { a.Shuffle(r, r, arx.RotateLanes(n)) }
	Label(name + "_double")
	a.AddRotXor(B, A, D, t, u, 7)
	a.AddRotXor(C, B, A, t, u, 9)
	a.AddRotXor(D, C, B, t, u, 13)
	a.AddRotXor(A, D, C, t, u, 18)
	rotate(D, 1)
	rotate(C, 2)
	rotate(B, 3)
	a.AddRotXor(D, A, B, t, u, 7)
	a.AddRotXor(C, D, A, t, u, 9)
	a.AddRotXor(B, C, D, t, u, 13)
	a.AddRotXor(A, B, C, t, u, 18)
	rotate(D, 3)
	rotate(C, 2)
	rotate(B, 1)
	DECQ(dr)
	JNZ(LabelRef(name + "_double"))

	Comment("Feed forward, then blend the diagonals back into matrix rows.")
	for k := range 4 {
		a.Add(x[k], orig[k])
	}
	omask := four(4, 5, 14, 15) // SSE: masks for the way back
	loadMasks(omask)
	for m := range 4 {
		blend(rows[m], [4]reg.VecPhysical{x[m], x[(m+3)%4], x[(m+2)%4], x[(m+1)%4]}, omask, v(9))
	}

	if per > 1 {
		CMPQ(blocks, U8(per))
		JB(LabelRef(name + "_partial"))
	}
	horizontalOutput(a, name, per, rows, false)
	ADDQ(U32(64*per), dst)
	ADDQ(U32(64*per), src)
	if i == sse {
		MOVO(orig[2], t)
		MOVOU(counterSteps(per, true), u)
		PADDL(u, t)
		MOVO(t, orig[2])
	} else {
		a.Add(orig[2].(reg.Register), counterSteps(per, true))
	}
	SUBQ(U8(per), blocks)
	JNZ(LabelRef(name + "_batch"))
	if per > 1 {
		JMP(LabelRef(name + "_done"))
		Label(name + "_partial")
		horizontalOutput(a, name, per, rows, true)
	}

	Label(name + "_done")
	// Store the counter word advanced by the original block count.
	Load(Param("blocks"), reg.RAX)
	ADDL(reg.EAX, word(s, 8))
	a.VZeroUpper()
	RET()
}

// horizontalOutput XORs the blocks held lane-wise in rows (row m of block L
// in lane L of rows[m]) into dst. With partial set, only blocks below the
// count in CX are written (block 0 always is).
func horizontalOutput(a arx.ISA, name string, per int, rows [4]reg.VecPhysical, partial bool) {
	emit := emitter(a, name, partial)
	v := func(k int) reg.Register { return vec(16*per, k) }
	switch per {
	case 1:
		for m := range 4 {
			emit(rows[m], 0, 16*m, v(4))
		}
	case 2:
		for h := range 2 {
			arx.JoinLow(v(4), rows[2*h], rows[2*h+1])
			arx.JoinHigh(v(5), rows[2*h], rows[2*h+1])
			emit(v(4), 0, 32*h, nil)
			emit(v(5), 1, 32*h, nil)
		}
	case 4:
		blocks, _ := arx.Transpose128x4([4]reg.Register{rows[0], rows[1], rows[2], rows[3]}, v(16))
		for l := range 4 {
			emit(blocks[l], l, 0, nil)
		}
	}
}

// laneMasks is the read-only table of the four one-lane masks SSE blends
// with: mask k is all ones in 32-bit lane k.
func laneMasks() Mem {
	var m [16]uint32
	for k := range 4 {
		m[5*k] = 0xffffffff
	}
	return arx.Words("salsa_lanemasks", m)
}

// counterSteps is the table added to the C diagonal of a horizontal kernel
// with per blocks: with step false, lane L gets L (block L of the batch);
// with step true, every lane (up to four) gets per (the next batch).
func counterSteps(per int, step bool) Mem {
	var c [16]uint32
	for l := range min(per, 4) {
		c[4*l] = uint32(l)
		if step {
			c[4*l] = uint32(per)
		}
	}
	return arx.Words(fmt.Sprintf("salsa_counter%d_%t", per, step), c)
}
