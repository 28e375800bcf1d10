package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// spilled are the state words the 16-register kernels keep in the frame:
// fourteen words and two scratch registers fill the register file. Words 3
// and 14 sit in different quarter rounds of both the column and the row
// round, so no step reads two words from memory.
var spilled = map[int]bool{3: true, 14: true}

// vertical16 emits a vertical-layout kernel for an ISA with 16 vector
// registers (AVX2: 8 blocks per group, SSSE3: 4): register i holds word i of
// every block of the group, but for the spilled words. The kernel takes any
// number of blocks: a last group smaller than the width stores only the
// blocks asked for.
//
// The SSSE3 kernel uses SSE2 instructions only. Without VPBROADCASTD, it
// broadcasts each input and precomputed word once per call into the frame,
// where a full-width aligned memory operand folds into the additions.
func vertical16(name string, isa arx.ISA) {
	lanes := isa.Lanes()
	TEXT(name, 0, preSignature)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs len(src)/64 Salsa20 blocks into dst, %d at a time in the", name, lanes),
		fmt.Sprintf("vertical layout (%s); a last group of fewer than %d blocks stores only those.", isa.Name, lanes))
	a := arx.LoadArgs()
	pre := Mem{Base: Load(Param("pre"), GP64())}
	ctr := GP64()
	MOVL(a.S.Offset(4*8), ctr.As32())

	// The frame holds the spilled words and, for the transposition, the
	// words that do not fit in registers meanwhile, each in the slot of
	// its number; SSSE3 also keeps there the broadcast input words (orig)
	// and precomputed words (bpre).
	slots := 16
	if !isa.VEX {
		slots += 16 + 17
	}
	f := arx.NewFrame(isa, slots)
	home := f.Slots(16)
	var orig, bpre []Mem
	if !isa.VEX {
		orig, bpre = f.Slots(16), f.Slots(17)
		broadcastOnce(a, pre, orig, bpre)
	}
	var w vstate
	for k := range 16 {
		if spilled[k] {
			w[k] = home[k]
		} else {
			w[k] = isa.Vec()
		}
	}
	t, u := isa.Vec(), isa.Vec()
	// counters sets v to the block counters of the lanes (tmp is scratch
	// for SSSE3).
	counters := func(v, tmp Register) {
		if isa.VEX {
			VMOVD(ctr.As32(), v.(VecVirtual).AsX())
			VPBROADCASTD(v.(VecVirtual).AsX(), v)
			isa.Add(v, arx.LaneIndex())
			return
		}
		MOVQ(ctr, v)
		PSHUFL(U8(0), v, v)
		MOVOU(arx.LaneIndex(), tmp)
		PADDL(tmp, v)
	}

	l := beginLoop(name, a)
	Comment("Load the words: the counter lanes, the rest of quarter round (0, 4, 8, 12),",
		"and the other twelve as they leave the first column round (see pre).")
	loadWords(isa, w, t, func(v Register, k int) {
		switch {
		case isa.VEX:
			isa.Broadcast(v, input(a, pre, k), nil)
		case fromState[k]:
			MOVO(orig[k], v)
		default:
			MOVO(bpre[k], v)
		}
	})
	counters(w[8].(Register), t)

	verticalRounds(isa, a, name+"_double", []vstate{w}, func(int, int) (Register, Register) { return t, u },
		func(_, x, k int) {
			v := w[x].(Register)
			if !isa.VEX {
				isa.Xor(v, bpre[k])
				return
			}
			isa.Broadcast(t, pre.Offset(4*k), nil)
			isa.Xor(v, t)
		})

	Comment("Feed forward: add the input words.")
	for k := range 16 {
		v, inReg := w[k].(Register)
		switch {
		case k == 8:
			counters(t, u)
			isa.Add(v, t)
		case !isa.VEX && inReg:
			isa.Add(v, orig[k])
		case !isa.VEX:
			MOVO(w[k], t)
			isa.Add(t, orig[k])
			MOVO(t, w[k])
		case inReg:
			isa.Broadcast(t, a.S.Offset(4*k), nil)
			isa.Add(v, t)
		default:
			isa.Broadcast(t, a.S.Offset(4*k), nil)
			isa.Add(t, w[k])
			isa.Store(w[k].(Mem), t)
		}
	}

	l.endLoop(isa, lanes, true, func(guarded bool) { output16(isa, a, w, home, guarded) },
		func() { ADDL(U8(lanes), ctr.As32()) })
}

// broadcastOnce fills orig with each word of s and bpre with each word of
// pre, broadcast to every lane (SSSE3 only: PSHUFD from the rows).
func broadcastOnce(a arx.Args, pre Mem, orig, bpre []Mem) {
	isa := arx.SSSE3
	for row := range 4 {
		rs, rp := isa.Vec(), isa.Vec()
		MOVOU(a.S.Offset(16*row), rs)
		MOVOU(pre.Offset(16*row), rp)
		for k := range 4 {
			v := isa.Vec()
			PSHUFL(U8(0x55*k), rs, v)
			MOVO(v, orig[4*row+k])
			v = isa.Vec()
			PSHUFL(U8(0x55*k), rp, v)
			MOVO(v, bpre[4*row+k])
		}
	}
	g, v := GP64(), isa.Vec()
	MOVL(pre.Offset(4*16), g.As32())
	MOVQ(g, v)
	PSHUFL(U8(0), v, v)
	MOVO(v, bpre[16])
}

// output16 transposes the state w (its spilled words in home, the slot of
// their number) so that each register holds consecutive bytes of one
// block, and XORs it into dst; guarded stores only the blocks that
// a.Blocks says exist. The words that do not fit in registers meanwhile go
// through their home slots.
func output16(isa arx.ISA, a arx.Args, w vstate, home []Mem, guarded bool) {
	// A group of four words per register set: the words of registers
	// [first, 16) go home, and word 3 comes back from it.
	first := 8
	if !isa.VEX {
		first = 4
	}
	for k := first; k < 16; k++ {
		if r, ok := w[k].(Register); ok {
			move(isa, home[k], r)
		}
	}
	// regs returns words k..k+n-1 in registers, loading those not below
	// first from home.
	regs := func(k, n int) []Register {
		r := make([]Register, n)
		for i := range r {
			if reg, ok := w[k+i].(Register); ok && k+i < first {
				r[i] = reg
				continue
			}
			r[i] = isa.Vec()
			move(isa, r[i], home[k+i])
		}
		return r
	}
	four := func(r []Register) [4]Register { return [4]Register(r) }
	if !isa.VEX {
		// A transposed group g holds bytes 16g..16g+15 of blocks 0-3.
		for g := range 4 {
			out, _ := isa.Transpose4x4(four(regs(4*g, 4)), isa.Vec())
			for j := range 4 {
				a.XorBlock(isa, j, 16*g, out[j], guarded)
			}
		}
		return
	}
	// YMM: a transposed group holds its words of block j in the low lane and
	// of block 4+j in the high lane; joining groups 2h and 2h+1 gives bytes
	// 32h..32h+31 of those blocks.
	for h := range 2 {
		r := regs(8*h, 8)
		lo, free := isa.Transpose4x4(four(r[:4]), isa.Vec())
		hi, _ := isa.Transpose4x4(four(r[4:]), free)
		for j := range 4 {
			l, r := isa.Vec(), isa.Vec()
			arx.JoinLow(l, lo[j], hi[j])
			arx.JoinHigh(r, lo[j], hi[j])
			a.XorBlock(isa, j, 32*h, l, guarded)
			a.XorBlock(isa, 4+j, 32*h, r, guarded)
		}
	}
}
