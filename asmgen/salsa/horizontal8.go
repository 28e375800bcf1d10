package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// genHorizontal8 emits xorHorizontalAVX512x8: two 4-block diagonal-layout
// groups (blocks 0-3 and 4-7 of each batch of 8) with their instructions
// interleaved. One group leaves the ZMM ports half idle, waiting on its
// single dependency chain; the second fills them, so 5 to 8 blocks cost
// little more than 4.
func genHorizontal8() {
	const name = "xorHorizontalAVX512x8"
	a := arx.AVX512
	TEXT(name, NOSPLIT, "func(s *[16]uint32, rounds int, dst, src *byte, blocks int)")
	Pragma("noescape")
	Doc(name + " XORs blocks key stream blocks into dst, 8 at a time as two interleaved 4-block groups in the diagonal layout (AVX512).")

	s, dst, src, blocks := reg.RSI, reg.RDI, reg.RDX, reg.RCX
	rounds, dr := reg.R8, reg.R9
	Load(Param("s"), s)
	Load(Param("rounds"), rounds)
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("blocks"), blocks)

	z := func(k int) reg.VecPhysical { return vec(64, k) }
	var x, orig [2][4]reg.VecPhysical // per group: A, B, C, D and their inputs
	var t [2]reg.VecPhysical
	for g := range 2 {
		for k := range 4 {
			x[g][k] = z(4*g + k)
			orig[g][k] = z(10 + 4*g + k)
		}
		t[g] = z(8 + g)
	}
	rows := [4]reg.VecPhysical{z(18), z(19), z(20), z(21)}

	for lane, m := range []int{0x2222, 0x4444, 0x8888} {
		MOVL(U32(m), reg.EAX)
		KMOVW(reg.EAX, []reg.OpmaskPhysical{reg.K1, reg.K2, reg.K3}[lane])
	}
	blend := func(out reg.VecPhysical, srcs [4]reg.VecPhysical) {
		VPBLENDMD(srcs[1], srcs[0], reg.K1, out)
		VPBLENDMD(srcs[2], out, reg.K2, out)
		VPBLENDMD(srcs[3], out, reg.K3, out)
	}

	Comment("Load the matrix rows and blend them into the diagonals of both groups.")
	for m := range 4 {
		a.BroadcastRow(rows[m], Mem{Base: s, Disp: 16 * m})
	}
	for k := range 4 {
		blend(orig[0][k], [4]reg.VecPhysical{rows[k], rows[(k+1)%4], rows[(k+2)%4], rows[(k+3)%4]})
		if k != 2 {
			a.Copy(orig[1][k], orig[0][k])
		}
	}
	// Lane L of group g is block 4g+L: add that to its counter word.
	a.Add3(orig[1][2], orig[0][2], groupCounters(4))
	a.Add(orig[0][2], counterSteps(4, false))

	TESTQ(blocks, blocks)
	JZ(LabelRef(name + "_done"))
	Label(name + "_batch")
	for g := range 2 {
		for k := range 4 {
			a.Copy(x[g][k], orig[g][k])
		}
	}
	MOVQ(rounds, dr)
	SHRQ(U8(1), dr)
	// both emits one step or lane rotation for each group in turn.
	step := func(xi, yi, zi, r int) {
		for g := range 2 {
			a.AddRotXor(x[g][xi], x[g][yi], x[g][zi], t[g], t[g], r)
		}
	}
	rotate := func(k, n int) {
		for g := range 2 {
			a.Shuffle(x[g][k], x[g][k], arx.RotateLanes(n))
		}
	}
	const A, B, C, D = 0, 1, 2, 3
	Label(name + "_double")
	step(B, A, D, 7)
	step(C, B, A, 9)
	step(D, C, B, 13)
	step(A, D, C, 18)
	rotate(D, 1)
	rotate(C, 2)
	rotate(B, 3)
	step(D, A, B, 7)
	step(C, D, A, 9)
	step(B, C, D, 13)
	step(A, B, C, 18)
	rotate(D, 3)
	rotate(C, 2)
	rotate(B, 1)
	DECQ(dr)
	JNZ(LabelRef(name + "_double"))

	Comment("Feed forward, then back to matrix rows and out, group by group.")
	for g := range 2 {
		for k := range 4 {
			a.Add(x[g][k], orig[g][k])
		}
	}
	output := func(partial bool) {
		suffix := "full"
		if partial {
			suffix = "part"
		}
		emit := emitter(a, fmt.Sprintf("%s_%s", name, suffix), partial)
		for g := range 2 {
			xs := x[g]
			for m := range 4 {
				blend(rows[m], [4]reg.VecPhysical{xs[m], xs[(m+3)%4], xs[(m+2)%4], xs[(m+1)%4]})
			}
			out, _ := arx.Transpose128x4([4]reg.Register{rows[0], rows[1], rows[2], rows[3]}, z(22))
			for l := range 4 {
				emit(out[l], 4*g+l, 0, nil)
			}
		}
	}
	CMPQ(blocks, U8(8))
	JB(LabelRef(name + "_partial"))
	output(false)
	ADDQ(U32(64*8), dst)
	ADDQ(U32(64*8), src)
	for g := range 2 {
		a.Add(orig[g][2], counterSteps(8, true))
	}
	SUBQ(U8(8), blocks)
	JNZ(LabelRef(name + "_batch"))
	JMP(LabelRef(name + "_done"))
	Label(name + "_partial")
	output(true)

	Label(name + "_done")
	Load(Param("blocks"), reg.RAX)
	ADDL(reg.EAX, word(s, 8))
	a.VZeroUpper()
	RET()
}

// groupCounters is the table adding block 4+L's offset to lane L's counter
// word for the second group of genHorizontal8.
func groupCounters(first int) Mem {
	var c [16]uint32
	for l := range 4 {
		c[4*l] = uint32(first + l)
	}
	return arx.Words(fmt.Sprintf("salsa_group%d", first), c)
}
