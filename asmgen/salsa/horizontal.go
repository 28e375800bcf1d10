package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
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

// Lane rotations for PSHUFD: lane i takes lane i+1, i+2 or i+3.
const (
	rot1 = 0x39
	rot2 = 0x4e
	rot3 = 0x93
)

// genHorizontal emits xorHorizontal<ISA>x<per>: per blocks (1, 2 or 4) per
// iteration, one block per 128-bit lane in the diagonal layout. It is the
// short-input path: its cost is one block's latency, however few blocks.
func genHorizontal(i isa, per int) {
	w := 16 * per
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

	// The blends that move words between the matrix rows and the
	// diagonals. SSE has no blend instruction: it masks and ORs.
	masks := laneMasks()
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
				MOVOU(masks.Offset(16*k), mregs[k])
			}
		}
	}

	Comment("Load the matrix rows and blend them into diagonals.")
	for m := range 4 {
		row := Mem{Base: s, Disp: 16 * m}
		switch {
		case i == sse:
			MOVOU(row, rows[m])
		case per == 1:
			VMOVDQU(row, rows[m])
		case per == 2:
			VBROADCASTI128(row, rows[m])
		default:
			VBROADCASTI32X4(row, rows[m])
		}
	}
	smask := four(6, 7, 8, 9) // SSE: masks while the diagonals are built
	loadMasks(smask)
	for k := range 4 {
		blend(x[k], [4]reg.VecPhysical{rows[k], rows[(k+1)%4], rows[(k+2)%4], rows[(k+3)%4]}, smask, t)
	}
	if per > 1 {
		// Lane L is block L: add L to its counter word (lane 0 of C).
		VPADDD(counterSteps(per, false), x[2], x[2])
	}
	for k := range 4 {
		vmov(i, x[k], orig[k])
	}

	TESTQ(blocks, blocks)
	JZ(LabelRef(name + "_done"))
	Label(name + "_batch")
	for k := range 4 {
		vmov(i, orig[k], x[k])
	}
	MOVQ(rounds, dr)
	SHRQ(U8(1), dr)
	A, B, C, D := x[0], x[1], x[2], x[3]
	pshufd := func(imm int, r reg.VecPhysical) {
		if i == sse {
			PSHUFL(U8(imm), r, r)
		} else {
			VPSHUFD(U8(imm), r, r)
		}
	}
	Label(name + "_double")
	arx(i, B, A, D, 7, t, u)
	arx(i, C, B, A, 9, t, u)
	arx(i, D, C, B, 13, t, u)
	arx(i, A, D, C, 18, t, u)
	pshufd(rot1, D)
	pshufd(rot2, C)
	pshufd(rot3, B)
	arx(i, D, A, B, 7, t, u)
	arx(i, C, D, A, 9, t, u)
	arx(i, B, C, D, 13, t, u)
	arx(i, A, B, C, 18, t, u)
	pshufd(rot3, D)
	pshufd(rot2, C)
	pshufd(rot1, B)
	DECQ(dr)
	JNZ(LabelRef(name + "_double"))

	Comment("Feed forward, then blend the diagonals back into matrix rows.")
	for k := range 4 {
		vadd(i, orig[k], x[k])
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
	horizontalOutput(i, name, per, rows, false)
	ADDQ(U32(64*per), dst)
	ADDQ(U32(64*per), src)
	if i == sse {
		MOVO(orig[2], t)
		vaddConst(i, counterSteps(per, true), t, u)
		MOVO(t, orig[2])
	} else {
		VPADDD(counterSteps(per, true), orig[2], orig[2])
	}
	SUBQ(U8(per), blocks)
	JNZ(LabelRef(name + "_batch"))
	if per > 1 {
		JMP(LabelRef(name + "_done"))
		Label(name + "_partial")
		horizontalOutput(i, name, per, rows, true)
	}

	Label(name + "_done")
	// Store the counter word advanced by the original block count.
	Load(Param("blocks"), reg.RAX)
	ADDL(reg.EAX, word(s, 8))
	if i != sse {
		VZEROUPPER()
	}
	RET()
}

// vaddConst adds a constant vector to r, through scratch for SSE (whose
// memory operands must be aligned, which read-only data is not promised).
func vaddConst(i isa, c Mem, r, scratch reg.VecPhysical) {
	if i == sse {
		MOVOU(c, scratch)
		PADDL(scratch, r)
		return
	}
	VPADDD(c, r, r)
}

// horizontalOutput XORs the blocks held lane-wise in rows (row m of block L
// in lane L of rows[m]) into dst. With partial set, only blocks below the
// count in CX are written (block 0 always is).
func horizontalOutput(i isa, name string, per int, rows [4]reg.VecPhysical, partial bool) {
	dst, src, blocks := reg.RDI, reg.RDX, reg.RCX
	suffix := "full"
	if partial {
		suffix = "part"
	}
	emit := func(v reg.VecPhysical, b, off int, t reg.VecPhysical) {
		skip := fmt.Sprintf("%s_%s_skip_%d_%d", name, suffix, b, off)
		if partial && b > 0 {
			CMPQ(blocks, U8(b))
			JBE(LabelRef(skip))
		}
		xorStore(i, v, Mem{Base: src, Disp: 64*b + off}, Mem{Base: dst, Disp: 64*b + off}, t)
		if partial && b > 0 {
			Label(skip)
		}
	}
	w := 16 * per
	v := func(k int) reg.VecPhysical { return vec(w, k) }
	switch per {
	case 1:
		for m := range 4 {
			emit(rows[m], 0, 16*m, v(4))
		}
	case 2:
		for h := range 2 {
			VPERM2I128(U8(0x20), rows[2*h+1], rows[2*h], v(4))
			VPERM2I128(U8(0x31), rows[2*h+1], rows[2*h], v(5))
			emit(v(4), 0, 32*h, nil)
			emit(v(5), 1, 32*h, nil)
		}
	case 4:
		out := [4]reg.VecPhysical{v(20), v(21), v(22), v(23)}
		transposeLanes(rows, [4]reg.VecPhysical{v(16), v(17), v(18), v(19)}, out)
		for l := range 4 {
			emit(out[l], l, 0, nil)
		}
	}
}

// laneMasks is the read-only table of the four one-lane masks SSE blends
// with: mask k is all ones in 32-bit lane k.
func laneMasks() Mem {
	if lanesMem != nil {
		return *lanesMem
	}
	m := GLOBL("salsaLaneMasks", RODATA|NOPTR)
	for k := range 4 {
		for j := range 4 {
			var word uint32
			if j == k {
				word = 0xffffffff
			}
			DATA(16*k+4*j, U32(word))
		}
	}
	lanesMem = &m
	return m
}

var lanesMem *Mem

// counterSteps is the table added to the C diagonal of a horizontal kernel
// with per blocks: with step false, lane L gets L (block L of the batch);
// with step true, every lane gets per (the next batch).
func counterSteps(per int, step bool) Mem {
	key := fmt.Sprintf("salsaCounter%dx%t", per, step)
	if m, ok := counterMem[key]; ok {
		return m
	}
	name := fmt.Sprintf("salsaLaneCounter%d", per)
	if step {
		name = fmt.Sprintf("salsaLaneStep%d", per)
	}
	m := GLOBL(name, RODATA|NOPTR)
	for l := range per {
		c := l
		if step {
			c = per
		}
		DATA(16*l, U32(c))
		for j := 1; j < 4; j++ {
			DATA(16*l+4*j, U32(0))
		}
	}
	counterMem[key] = m
	return m
}

var counterMem = map[string]Mem{}
