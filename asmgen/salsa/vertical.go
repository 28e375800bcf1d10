package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// spilled are the state words the SSE and AVX2 vertical kernels keep on the
// stack: with 16 vector registers, 14 words and two scratch registers fill
// the file. Words 3 and 14 sit in different quarter rounds of both the
// column and the row round, so no step reads two words from memory.
var spilled = map[int]bool{3: true, 14: true}

// fromState marks the words a vertical kernel loads from s rather than from
// pre at the start of each batch: 0 and 12, which the first double round
// takes unchanged into the counter's quarter round, and the counter word 8
// (computed per lane).
var fromState = map[int]bool{0: true, 8: true, 12: true}

// firstDoubleRound emits the part of the first double round that depends on
// the block counter, starting from pre (see internal/salsacore's
// firstRound, which computes the rest once per call): step(x, y, z, r)
// emits x ^= rotl(y + z, r) and xorPre(x, k) emits x ^= pre[k], a rotated
// sum precomputed in a slot whose word the kernel does not load from pre
// (0, 8, 12) or in the extra slot 16.
//
// Of the column round only steps 2-4 of quarter (0, 4, 8, 12) remain (step
// 2's rotated sum is in pre[8]). Of the row round, quarter (5, 6, 7, 4) is
// done except that word 4 comes in as the column round left it, for step
// 3 above, and takes its row update from pre[16] after; (10, 11, 8, 9) has
// steps 2-4 left (step 2's rotated sum in pre[0]), (15, 12, 13, 14) steps
// 1-4 (step 1's rotated sum in pre[12]), and (0, 1, 2, 3) all four. That is
// 37 instructions per state instead of the 96 of a full double round on
// AVX-512.
func firstDoubleRound(step func(x, y, z, r int), xorPre func(x, k int)) {
	xorPre(8, 8)
	step(12, 8, 4, 13)
	xorPre(4, 16) // row quarter (5, 6, 7, 4)'s step 3, done but for this
	step(0, 12, 8, 18)
	// The column round is complete: words 8 and 12 move on into the row
	// round.
	xorPre(8, 0)
	xorPre(12, 12)
	chains := [][][4]int{
		{{1, 0, 3, 7}, {2, 1, 0, 9}, {3, 2, 1, 13}, {0, 3, 2, 18}},
		{{9, 8, 11, 13}, {10, 9, 8, 18}},
		{{13, 12, 15, 9}, {14, 13, 12, 13}, {15, 14, 13, 18}},
	}
	for i := range 4 {
		for _, c := range chains {
			if i < len(c) {
				step(c[i][0], c[i][1], c[i][2], c[i][3])
			}
		}
	}
}

// genVertical emits xorVertical<ISA>: N = register bytes / 4 blocks per
// iteration, register i holding word i of the N blocks. The last iteration
// may have fewer than N blocks left; it computes N and writes only those.
//
// Much of the first double round does not depend on the block counter and
// is the same for every block of a call: the caller computes it once and
// passes it in pre, and each batch starts from there (firstDoubleRound).
// That saves 60 of the 384 instructions a Salsa20/8 block spends in its
// rounds on AVX-512, and 60 of 960 for Salsa20/20.
func genVertical(i isa) {
	w := i.bytes()
	n := w / 4
	a := i.ops(w)
	name := "xorVertical" + i.String()
	lanes := arx.LaneIndex()

	// Not NOSPLIT for SSE and AVX2: their frame of over 500 bytes is too
	// much to borrow from the caller's stack guard.
	attr := NOSPLIT
	if i != avx512 {
		attr = 0
	}
	TEXT(name, attr, "func(s *[16]uint32, pre *[17]uint32, rounds int, dst, src *byte, blocks int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs blocks key stream blocks into dst, %d at a time in the vertical layout (%s).", name, n, i))

	s, dst, src, blocks, ctr := reg.RSI, reg.RDI, reg.RDX, reg.RCX, reg.RBX
	rounds, dr, base, pre := reg.R8, reg.R9, reg.R10, reg.R11
	Load(Param("s"), s)
	Load(Param("pre"), pre)
	Load(Param("rounds"), rounds)
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("blocks"), blocks)
	MOVL(word(s, 8), reg.EBX)

	// The stack holds the spilled words and, before the XOR, the words
	// being transposed (16 vectors); the SSE kernel also keeps the
	// broadcast input words and precomputed words there (16 + 17 more). It is aligned to 64 bytes so
	// that SSE can use it as a memory operand and no vector splits a line.
	if i != avx512 {
		size := 16*w + 64
		if i == sse {
			size += 33 * w
		}
		local := AllocLocal(size)
		LEAQ(local, base)
		ADDQ(U8(63), base)
		ANDQ(I8(-64), base)
	}
	wslot := func(k int) Mem { return Mem{Base: base, Disp: w * k} }
	oslot := func(k int) Mem { return Mem{Base: base, Disp: 16*w + w*k} }
	pslot := func(k int) Mem { return Mem{Base: base, Disp: 32*w + w*k} }

	// Where each state word lives during the rounds. SSE and AVX2: words 3
	// and 14 on the stack, word 15 in register 3, registers 14 and 15 the
	// scratch pair. AVX-512: word k in Z k, four scratch registers so the
	// four quarter rounds of a round use different ones.
	var words [16]Op
	for k := range 16 {
		switch {
		case i != avx512 && spilled[k]:
			words[k] = wslot(k)
		case i != avx512 && k == 15:
			words[k] = vec(w, 3)
		default:
			words[k] = vec(w, k)
		}
	}
	var scratch [4][2]reg.VecPhysical
	for q := range scratch {
		if i == avx512 {
			scratch[q] = [2]reg.VecPhysical{vec(w, 16+q), vec(w, 16+q)}
		} else {
			scratch[q] = [2]reg.VecPhysical{vec(w, 14), vec(w, 15)}
		}
	}
	t, u := scratch[0][0], scratch[0][1]
	ctrVec := vec(w, 20) // AVX-512 only: the counter lanes of this batch

	if i == sse {
		// Broadcast each input word and each precomputed word once per
		// call.
		for row := range 4 {
			MOVOU(Mem{Base: s, Disp: 16 * row}, reg.X0)
			MOVOU(Mem{Base: pre, Disp: 16 * row}, reg.X2)
			for k := range 4 {
				PSHUFL(U8(0x55*k), reg.X0, reg.X1)
				MOVO(reg.X1, oslot(4*row+k))
				PSHUFL(U8(0x55*k), reg.X2, reg.X3)
				MOVO(reg.X3, pslot(4*row+k))
			}
		}
		MOVL(word(pre, 16), reg.EAX)
		MOVQ(reg.RAX, reg.X0)
		PSHUFL(U8(0), reg.X0, reg.X0)
		MOVO(reg.X0, pslot(16))
	}

	TESTQ(blocks, blocks)
	JZ(LabelRef(name + "_done"))

	Label(name + "_batch")
	Comment("Load the words: the counter lanes, the rest of quarter round (0, 4, 8, 12),",
		"and the other twelve as they leave the first column round (see pre).")
	// counterVector sets v to the block counter plus the lane index.
	counterVector := func(v, scratch reg.VecPhysical) {
		switch i {
		case sse:
			MOVQ(ctr, v)
			PSHUFL(U8(0), v, v)
			MOVOU(lanes, scratch)
			PADDL(scratch, v)
		case avx2:
			VMOVD(reg.EBX, v.AsX())
			VPBROADCASTD(v.AsX(), v)
			a.Add(v, lanes)
		case avx512:
			VPBROADCASTD(reg.EBX, v)
			a.Add(v, lanes)
		}
	}
	for k := range 16 {
		if k == 8 {
			continue
		}
		v, isReg := words[k].(reg.VecPhysical)
		if !isReg {
			v = t
		}
		from, slot := word(pre, k), pslot(k)
		if fromState[k] {
			from, slot = word(s, k), oslot(k)
		}
		if i == sse {
			MOVO(slot, v)
		} else {
			a.Broadcast(v, from, nil)
		}
		if !isReg {
			a.Store(words[k].(Mem), v)
		}
	}
	if i == avx512 {
		counterVector(ctrVec, nil)
		a.Copy(vec(w, 8), ctrVec)
	} else {
		counterVector(vec(w, 8), t)
	}

	// round emits the quarter rounds of one round, step by step across
	// them so that four independent chains are in flight.
	round := func(quarters [][4]int) {
		for step := range 4 {
			for q, quarter := range quarters {
				x := quarterSteps(quarter)[step]
				a.AddRotXorMem(words[x[0]], words[x[1]], words[x[2]], scratch[q][0], scratch[q][1], rotations[step])
			}
		}
	}
	Comment("First double round: what depends on the counter (see firstDoubleRound).")
	firstDoubleRound(func(x, y, z, r int) {
		a.AddRotXorMem(words[x], words[y], words[z], t, u, r)
	}, func(x, k int) {
		v := words[x].(reg.VecPhysical)
		switch i {
		case avx512:
			VPXORD_BCST(word(pre, k), v, v)
		case avx2:
			a.Broadcast(t, word(pre, k), nil)
			a.Xor(v, t)
		case sse:
			a.Xor(v, pslot(k))
		}
	})
	MOVQ(rounds, dr)
	SHRQ(U8(1), dr)
	DECQ(dr)
	Label(name + "_double")
	round(columnRound[:])
	round(rowRound[:])
	DECQ(dr)
	JNZ(LabelRef(name + "_double"))

	Comment("Feed forward: add the input words.")
	for k := range 16 {
		v, isReg := words[k].(reg.VecPhysical)
		switch {
		case i == avx512 && k == 8:
			a.Add(v, ctrVec)
		case i == avx512:
			a.AddBcst(v, word(s, k))
		case k == 8:
			counterVector(t, u)
			a.Add(v, t)
		case i == sse && isReg:
			a.Add(v, oslot(k))
		case i == sse:
			MOVO(words[k], t)
			a.Add(t, oslot(k))
			MOVO(t, words[k])
		case isReg:
			a.Broadcast(t, word(s, k), nil)
			a.Add(v, t)
		default:
			a.Broadcast(t, word(s, k), nil)
			a.Add(t, words[k])
			a.Store(words[k].(Mem), t)
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
	a.VZeroUpper()
	RET()
}

// verticalOutput transposes the state so that each register holds
// consecutive bytes of one block, XORs it with src and stores it to dst.
// With partial set, only blocks below the count in CX are read and written.
func verticalOutput(i isa, name string, words [16]Op, partial bool) {
	w := i.bytes()
	a := i.ops(w)
	base := reg.R10
	wslot := func(k int) Mem { return Mem{Base: base, Disp: w * k} }
	v := func(k int) reg.Register { return vec(w, k) }
	four := func(a, b, c, d int) [4]reg.Register { return [4]reg.Register{v(a), v(b), v(c), v(d)} }
	emit := emitter(a, name, partial)

	switch i {
	case avx512:
		// Group g: words 4g..4g+3. After its in-lane transpose, register
		// j of the group holds those words of blocks j, 4+j, 8+j, 12+j.
		var groups [4][4]reg.Register
		free := v(16)
		for g := range 4 {
			groups[g], free = a.Transpose4x4(four(4*g, 4*g+1, 4*g+2, 4*g+3), free)
		}
		for j := range 4 {
			var blocks [4]reg.Register
			blocks, free = arx.Transpose128x4([4]reg.Register{groups[0][j], groups[1][j], groups[2][j], groups[3][j]}, free)
			for l := range 4 {
				emit(blocks[l], 4*l+j, 0, nil)
			}
		}
	case avx2:
		// Words 0-7 are in registers 0-7 except word 3 (spilled, its
		// register holds word 15); words 8-15 go through the stack.
		for k := 8; k < 16; k++ {
			if r, ok := words[k].(reg.Register); ok {
				a.Store(wslot(k), r)
			}
		}
		a.Load(v(3), wslot(3))
		for h := range 2 {
			if h == 1 {
				for k := range 8 {
					a.Load(v(k), wslot(8+k))
				}
			}
			lo, free := a.Transpose4x4(four(0, 1, 2, 3), v(8))
			hi, _ := a.Transpose4x4(four(4, 5, 6, 7), free)
			// lo[j]: words 8h..8h+3 of blocks j and 4+j; hi[j]: words
			// 8h+4..8h+7 of the same blocks.
			for j := range 4 {
				arx.JoinLow(v(12), lo[j], hi[j])
				arx.JoinHigh(v(13), lo[j], hi[j])
				emit(v(12), j, 32*h, nil)
				emit(v(13), 4+j, 32*h, nil)
			}
		}
	case sse:
		for k := 4; k < 16; k++ {
			if r, ok := words[k].(reg.Register); ok {
				MOVO(r, wslot(k))
			}
		}
		MOVO(wslot(3), v(3))
		for g := range 4 {
			if g > 0 {
				for k := range 4 {
					MOVO(wslot(4*g+k), v(k))
				}
			}
			out, _ := a.Transpose4x4(four(0, 1, 2, 3), v(4))
			for j := range 4 {
				emit(out[j], j, 16*g, v(8))
			}
		}
	}
}

// emitter returns a function that XORs v into bytes [off, off+width) of
// block b of src and writes them to dst. With partial set it first checks
// the block against the remaining count in CX (block 0 always exists).
func emitter(a arx.ISA, name string, partial bool) func(v reg.Register, b, off int, t reg.Register) {
	dst, src, blocks := reg.RDI, reg.RDX, reg.RCX
	suffix := "full"
	if partial {
		suffix = "part"
	}
	return func(v reg.Register, b, off int, t reg.Register) {
		skip := fmt.Sprintf("%s_%s_skip_%d_%d", name, suffix, b, off)
		if partial && b > 0 {
			CMPQ(blocks, U8(b))
			JBE(LabelRef(skip))
		}
		a.XorStore(Mem{Base: dst, Disp: 64*b + off}, Mem{Base: src, Disp: 64*b + off}, v, t)
		if partial && b > 0 {
			Label(skip)
		}
	}
}
