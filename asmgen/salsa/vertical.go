package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// spilled are the state words the SSE and AVX2 vertical kernels keep on the
// stack: with 16 vector registers, 14 words and two scratch registers fill
// the file. Words 3 and 14 sit in different quarter rounds of both the
// column and the row round, so no step reads two words from memory.
var spilled = map[int]bool{3: true, 14: true}

// genVertical emits xorVertical<ISA>: N = register bytes / 4 blocks per
// iteration, register i holding word i of the N blocks. The last iteration
// may have fewer than N blocks left; it computes N and writes only those.
func genVertical(i isa) {
	w := i.bytes()
	n := w / 4
	name := "xorVertical" + i.String()
	iota := counterLanes(fmt.Sprintf("salsaLanes%d", n), n)

	// Not NOSPLIT: the SSE and AVX2 kernels have a frame of over 500 bytes,
	// too much to borrow from the caller's stack guard.
	attr := NOSPLIT
	if i != avx512 {
		attr = 0
	}
	TEXT(name, attr, "func(s *[16]uint32, rounds int, dst, src *byte, blocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs blocks key stream blocks into dst, %d at a time in the vertical layout (%s).", name, n, i))

	s, dst, src, blocks, ctr := reg.RSI, reg.RDI, reg.RDX, reg.RCX, reg.RBX
	rounds, dr, base := reg.R8, reg.R9, reg.R10
	Load(Param("s"), s)
	Load(Param("rounds"), rounds)
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("blocks"), blocks)
	MOVL(word(s, 8), reg.EBX)

	// The stack holds the spilled words and, before the XOR, the words
	// being transposed (16 vectors); the SSE kernel also keeps the
	// broadcast input words there (16 more). It is aligned to 64 bytes so
	// that SSE can use it as a memory operand and no vector splits a line.
	if i != avx512 {
		size := 16*w + 64
		if i == sse {
			size += 16 * w
		}
		local := AllocLocal(size)
		LEAQ(local, base)
		ADDQ(U8(63), base)
		ANDQ(I8(-64), base)
	}
	wslot := func(k int) Mem { return Mem{Base: base, Disp: w * k} }
	oslot := func(k int) Mem { return Mem{Base: base, Disp: 16*w + w*k} }

	// Where each state word lives during the rounds.
	var words [16]Op
	var t, u reg.VecPhysical
	temps := []reg.VecPhysical{}
	for k := range 16 {
		if i != avx512 && spilled[k] {
			words[k] = wslot(k)
		} else {
			words[k] = vec(w, k)
		}
	}
	switch i {
	case avx512:
		for k := 16; k < 20; k++ {
			temps = append(temps, vec(w, k))
		}
	default:
		t, u = vec(w, 14), vec(w, 15)
		words[13] = vec(w, 13)
		// Registers 14 and 15 are the scratch pair; words 14 and 15 need
		// homes: word 14 is spilled, word 15 takes register 3 (word 3 is
		// spilled too).
		words[15] = vec(w, 3)
	}
	ctrVec := vec(w, 20) // AVX-512 only: the counter lanes of this batch

	if i == sse {
		// Broadcast each input word once per call.
		for row := range 4 {
			MOVOU(Mem{Base: s, Disp: 16 * row}, reg.X0)
			for k := range 4 {
				PSHUFL(U8(0x55*k), reg.X0, reg.X1)
				MOVO(reg.X1, oslot(4*row+k))
			}
		}
	}

	TESTQ(blocks, blocks)
	JZ(LabelRef(name + "_done"))

	Label(name + "_batch")
	Comment("Load the input words; word 8 is the counter of each lane's block.")
	counterVector := func(dstv, scratch reg.VecPhysical) {
		switch i {
		case sse:
			MOVQ(ctr, dstv)
			PSHUFL(U8(0), dstv, dstv)
			MOVOU(iota, scratch)
			PADDL(scratch, dstv)
		case avx2:
			VMOVD(reg.EBX, dstv.AsX())
			VPBROADCASTD(dstv.AsX(), dstv)
			VPADDD(iota, dstv, dstv)
		case avx512:
			VPBROADCASTD(reg.EBX, dstv)
			VPADDD(iota, dstv, dstv)
		}
	}
	for k := range 16 {
		if k == 8 {
			continue
		}
		dstv, isReg := words[k].(reg.VecPhysical)
		if !isReg {
			dstv = t
		}
		switch i {
		case sse:
			MOVO(oslot(k), dstv)
		default:
			VPBROADCASTD(word(s, k), dstv)
		}
		if !isReg {
			vmov(i, dstv, words[k])
		}
	}
	if i == avx512 {
		counterVector(ctrVec, nil)
		VMOVDQU64(ctrVec, words[8])
	} else {
		counterVector(words[8].(reg.VecPhysical), t)
	}

	MOVQ(rounds, dr)
	SHRQ(U8(1), dr)
	Label(name + "_double")
	for _, round := range [2][4][4]int{columnRound, rowRound} {
		for step := range 4 {
			for q, quarter := range round {
				x := quarterSteps(quarter)[step]
				if i == avx512 {
					t = temps[q]
				}
				arx(i, words[x[0]], words[x[1]], words[x[2]], rotations[step], t, u)
			}
		}
	}
	DECQ(dr)
	JNZ(LabelRef(name + "_double"))

	Comment("Feed forward: add the input words.")
	for k := range 16 {
		switch {
		case i == avx512 && k == 8:
			VPADDD(ctrVec, vec(w, 8), vec(w, 8))
		case i == avx512:
			VPADDD_BCST(word(s, k), vec(w, k), vec(w, k))
		case k == 8:
			counterVector(t, u)
			vadd(i, t, words[8].(reg.VecPhysical))
		case i == sse && !isMem(words[k]):
			PADDL(oslot(k), words[k].(reg.VecPhysical))
		case i == sse:
			MOVO(words[k], t)
			PADDL(oslot(k), t)
			MOVO(t, words[k])
		case !isMem(words[k]):
			VPBROADCASTD(word(s, k), t)
			VPADDD(t, words[k].(reg.VecPhysical), words[k].(reg.VecPhysical))
		default:
			VPBROADCASTD(word(s, k), t)
			VPADDD(words[k], t, t)
			VMOVDQU(t, words[k])
		}
	}

	CMPQ(blocks, U8(n))
	JB(LabelRef(name + "_partial"))
	verticalOutput(i, name, words, false)
	ADDQ(U32(64*n), dst)
	ADDQ(U32(64*n), src)
	ADDL(U8(n), reg.EBX)
	SUBQ(U8(n), blocks)
	JNZ(LabelRef(name + "_batch"))
	JMP(LabelRef(name + "_done"))

	Label(name + "_partial")
	verticalOutput(i, name, words, true)
	ADDL(reg.ECX, reg.EBX)

	Label(name + "_done")
	MOVL(reg.EBX, word(s, 8))
	if i != sse {
		VZEROUPPER()
	}
	RET()
}

// verticalOutput transposes the state so that each register holds
// consecutive bytes of one block, XORs it with src and stores it to dst.
// With partial set, only blocks below the count in CX are read and written.
func verticalOutput(i isa, name string, words [16]Op, partial bool) {
	w := i.bytes()
	dst, src, blocks := reg.RDI, reg.RDX, reg.RCX
	suffix := "full"
	if partial {
		suffix = "part"
	}
	// emit writes bytes [off, off+width) of block b from v.
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
	base := reg.R10
	wslot := func(k int) Mem { return Mem{Base: base, Disp: w * k} }
	v := func(k int) reg.VecPhysical { return vec(w, k) }
	four := func(a, b, c, d int) [4]reg.VecPhysical { return [4]reg.VecPhysical{v(a), v(b), v(c), v(d)} }

	switch i {
	case avx512:
		for g := range 4 {
			transpose4(i, four(4*g, 4*g+1, 4*g+2, 4*g+3), four(16, 17, 18, 19))
		}
		// Register 4g+j now holds words 4g..4g+3 of blocks j, 4+j, 8+j,
		// 12+j in its four lanes.
		for j := range 4 {
			out := four(24, 25, 26, 27)
			transposeLanes(four(j, 4+j, 8+j, 12+j), four(20, 21, 22, 23), out)
			for l := range 4 {
				emit(out[l], 4*l+j, 0, nil)
			}
		}
	case avx2:
		// Words 0-7 are in registers 0-7 except word 3 (spilled); words
		// 8-15 go through the stack.
		for k := 8; k < 16; k++ {
			if !isMem(words[k]) {
				VMOVDQU(words[k], wslot(k))
			}
		}
		VMOVDQU(words[3], v(3))
		for h := range 2 {
			if h == 1 {
				for k := range 8 {
					VMOVDQU(wslot(8+k), v(k))
				}
			}
			transpose4(i, four(0, 1, 2, 3), four(8, 9, 10, 11))
			transpose4(i, four(4, 5, 6, 7), four(8, 9, 10, 11))
			// Register j: words 8h..8h+3 of blocks j and 4+j; register 4+j:
			// words 8h+4..8h+7 of the same blocks.
			for j := range 4 {
				VPERM2I128(U8(0x20), v(4+j), v(j), v(8))
				VPERM2I128(U8(0x31), v(4+j), v(j), v(9))
				emit(v(8), j, 32*h, nil)
				emit(v(9), 4+j, 32*h, nil)
			}
		}
	case sse:
		for k := 4; k < 16; k++ {
			if !isMem(words[k]) {
				MOVO(words[k], wslot(k))
			}
		}
		MOVO(words[3], v(3))
		for g := range 4 {
			if g > 0 {
				for k := range 4 {
					MOVO(wslot(4*g+k), v(k))
				}
			}
			transpose4(i, four(0, 1, 2, 3), four(4, 5, 6, 7))
			for j := range 4 {
				emit(v(j), j, 16*g, v(8))
			}
		}
	}
}

// vmov copies a vector between registers or to and from memory.
func vmov(i isa, src, dst Op) {
	switch {
	case i == sse:
		MOVO(src, dst)
	case i == avx512 && (isZ(src) || isZ(dst)):
		VMOVDQU64(src, dst)
	default:
		VMOVDQU(src, dst)
	}
}

func isZ(o Op) bool {
	r, ok := o.(reg.VecPhysical)
	return ok && r.Size() == 64
}
