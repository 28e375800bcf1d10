package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// genHorizontalPair emits xorHorizontal<ISA>x<2*per>: two diagonal-layout
// groups of per blocks each (AVX2: 2 per YMM, AVX-512: 4 per ZMM) with
// their instructions interleaved. One group leaves the ports idle half the
// time, waiting on its single dependency chain; the second fills them, so
// twice the blocks cost little more than one group.
//
// AVX-512 keeps everything in registers. AVX2 has sixteen, so the input
// diagonals (for the feed forward) live on the stack.
func genHorizontalPair(i isa) {
	per := map[isa]int{avx2: 2, avx512: 4}[i]
	w := 16 * per
	n := 2 * per
	a := i.ops(w)
	name := fmt.Sprintf("xorHorizontal%sx%d", i, n)
	TEXT(name, NOSPLIT, "func(s *[16]uint32, rounds int, dst, src *byte, blocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs blocks key stream blocks into dst, %d at a time as two interleaved %d-block groups in the diagonal layout (%s).", name, n, per, i))

	s, dst, src, blocks := reg.RSI, reg.RDI, reg.RDX, reg.RCX
	rounds, dr, base := reg.R8, reg.R9, reg.R10
	Load(Param("s"), s)
	Load(Param("rounds"), rounds)
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("blocks"), blocks)

	v := func(k int) reg.VecPhysical { return vec(w, k) }
	var x [2][4]reg.VecPhysical // per group: A, B, C, D
	var orig [2][4]Op           // and their inputs
	var t, u [2]reg.VecPhysical
	var rows [4]reg.VecPhysical
	var scratch reg.VecPhysical
	if i == avx512 {
		for g := range 2 {
			for k := range 4 {
				x[g][k] = v(4*g + k)
				orig[g][k] = v(10 + 4*g + k)
			}
			t[g], u[g] = v(8+g), v(8+g)
		}
		rows = [4]reg.VecPhysical{v(18), v(19), v(20), v(21)}
		scratch = v(22)
		for lane, m := range []int{0x2222, 0x4444, 0x8888} {
			MOVL(U32(m), reg.EAX)
			KMOVW(reg.EAX, []reg.OpmaskPhysical{reg.K1, reg.K2, reg.K3}[lane])
		}
	} else {
		local := AllocLocal(8*w + 32)
		LEAQ(local, base)
		ADDQ(U8(31), base)
		ANDQ(I8(-32), base)
		for g := range 2 {
			for k := range 4 {
				x[g][k] = v(4*g + k)
				orig[g][k] = Mem{Base: base, Disp: w * (4*g + k)}
			}
			t[g], u[g] = v(8), v(9)
		}
		rows = [4]reg.VecPhysical{v(10), v(11), v(12), v(13)}
		scratch = v(14)
	}
	blend := func(out reg.VecPhysical, srcs [4]reg.VecPhysical) {
		if i == avx512 {
			VPBLENDMD(srcs[1], srcs[0], reg.K1, out)
			VPBLENDMD(srcs[2], out, reg.K2, out)
			VPBLENDMD(srcs[3], out, reg.K3, out)
			return
		}
		VPBLENDD(U8(0x22), srcs[1], srcs[0], out)
		VPBLENDD(U8(0x44), srcs[2], out, out)
		VPBLENDD(U8(0x88), srcs[3], out, out)
	}
	// copyVec moves a vector between registers or to and from the stack.
	copyVec := func(src, dst Op) {
		if m, ok := dst.(Mem); ok {
			a.Store(m, src.(reg.Register))
			return
		}
		if m, ok := src.(Mem); ok {
			a.Load(dst.(reg.Register), m)
			return
		}
		a.Copy(dst.(reg.Register), src.(reg.Register))
	}

	Comment("Load the matrix rows and blend them into the diagonals of both groups.")
	for m := range 4 {
		a.BroadcastRow(rows[m], Mem{Base: s, Disp: 16 * m})
	}
	for k := range 4 {
		blend(x[0][k], [4]reg.VecPhysical{rows[k], rows[(k+1)%4], rows[(k+2)%4], rows[(k+3)%4]})
	}
	// Lane L of group g is block per*g+L: add that to its counter word.
	a.Add3(x[1][2], x[0][2], groupCounters(per))
	a.Add(x[0][2], counterSteps(per, false))
	for g := range 2 {
		for k := range 4 {
			if g == 1 && k != 2 {
				copyVec(x[0][k], x[1][k])
			}
			copyVec(x[g][k], orig[g][k])
		}
	}

	TESTQ(blocks, blocks)
	JZ(LabelRef(name + "_done"))
	Label(name + "_batch")
	for g := range 2 {
		for k := range 4 {
			copyVec(orig[g][k], x[g][k])
		}
	}
	MOVQ(rounds, dr)
	SHRQ(U8(1), dr)
	// step and rotate emit one step or lane rotation for each group.
	step := func(xi, yi, zi, r int) {
		for g := range 2 {
			a.AddRotXor(x[g][xi], x[g][yi], x[g][zi], t[g], u[g], r)
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
			if i == avx512 {
				out, _ := arx.Transpose128x4([4]reg.Register{rows[0], rows[1], rows[2], rows[3]}, scratch)
				for l := range 4 {
					emit(out[l], per*g+l, 0, nil)
				}
				continue
			}
			for h := range 2 {
				arx.JoinLow(scratch, rows[2*h], rows[2*h+1])
				emit(scratch, per*g, 32*h, nil)
				arx.JoinHigh(scratch, rows[2*h], rows[2*h+1])
				emit(scratch, per*g+1, 32*h, nil)
			}
		}
	}
	CMPQ(blocks, U8(n))
	JB(LabelRef(name + "_partial"))
	output(false)
	ADDQ(U32(64*n), dst)
	ADDQ(U32(64*n), src)
	for g := range 2 {
		if m, ok := orig[g][2].(Mem); ok {
			a.Load(t[g], m)
			a.Add(t[g], counterSteps(n, true))
			a.Store(m, t[g])
		} else {
			a.Add(orig[g][2].(reg.Register), counterSteps(n, true))
		}
	}
	SUBQ(U8(n), blocks)
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

// groupCounters is the table adding block per+L's offset to lane L's
// counter word, for the second group of genHorizontalPair.
func groupCounters(per int) Mem {
	var c [16]uint32
	for l := range 4 {
		c[4*l] = uint32(per + l)
	}
	return arx.Words(fmt.Sprintf("salsa_group%d", per), c)
}
