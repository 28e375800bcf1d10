package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// genVertical32 emits xorVertical32AVX512: two independent 16-block states
// (blocks 0-15 in Z0-Z15, blocks 16-31 in Z16-Z31) with their instructions
// interleaved. One 16-block state has four independent quarter-round chains
// per round; where chains merge between rounds the ports idle unless a
// second state has work ready, and the rotations all compete for the one
// port that runs VPROLD. Two states keep both ZMM ports busy.
//
// Salsa20 needs a scratch register per step, which 32 state words leave no
// room for, so each state keeps one word (3 in the first, 19 = word 3 of the
// second) in memory; their steps fold the load and pay one store.
//
// blocks must be a positive multiple of 32; the caller sends the rest to
// xorVerticalAVX512.
func genVertical32() {
	const name = "xorVertical32AVX512"
	a := arx.AVX512
	lanes := arx.LaneIndex()
	sixteen := arx.Words("salsa_sixteen", [16]uint32{16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16})

	TEXT(name, NOSPLIT, "func(s *[16]uint32, pre *[17]uint32, rounds int, dst, src *byte, blocks int)")
	Pragma("noescape")
	Doc(name + " XORs blocks (a multiple of 32) key stream blocks into dst, as two interleaved 16-block vertical states (AVX512).")

	s, dst, src, blocks := reg.RSI, reg.RDI, reg.RDX, reg.RCX
	rounds, dr, base, pre := reg.R8, reg.R9, reg.R10, reg.R11
	Load(Param("s"), s)
	Load(Param("pre"), pre)
	Load(Param("rounds"), rounds)
	Load(Param("dst"), dst)
	Load(Param("src"), src)
	Load(Param("blocks"), blocks)
	MOVL(word(s, 8), reg.EBX)

	local := AllocLocal(2*64 + 64)
	LEAQ(local, base)
	ADDQ(U8(63), base)
	ANDQ(I8(-64), base)
	slot := func(set int) Mem { return Mem{Base: base, Disp: 64 * set} }

	const spill = 3 // the word each state keeps in memory
	z := func(k int) reg.Register { return vec(64, k) }
	var words [2][16]Op
	var temp [2]reg.Register
	for set := range 2 {
		for k := range 16 {
			words[set][k] = z(16*set + k)
		}
		words[set][spill] = slot(set)
		temp[set] = z(16*set + spill)
	}

	SHRQ(U8(5), blocks) // batches of 32
	Label(name + "_batch")
	Comment("Load both states; word 8 holds each lane's block counter.")
	for set := range 2 {
		for k := range 16 {
			if k == 8 {
				continue
			}
			from := word(pre, k)
			if fromState[k] {
				from = word(s, k)
			}
			if k == spill {
				a.Broadcast(temp[set], from, nil)
				a.Store(slot(set), temp[set])
				continue
			}
			a.Broadcast(words[set][k].(reg.Register), from, nil)
		}
	}
	// counter sets v to the block counters of the lanes of state set.
	counter := func(v reg.Register, set int) {
		VPBROADCASTD(reg.EBX, v)
		a.Add(v, lanes)
		if set == 1 {
			a.Add(v, sixteen)
		}
	}
	counter(z(8), 0)
	counter(z(24), 1)

	round := func(quarters [][4]int) {
		for step := range 4 {
			for _, quarter := range quarters {
				x := quarterSteps(quarter)[step]
				for set := range 2 {
					w := words[set]
					a.AddRotXorMem(w[x[0]], w[x[1]], w[x[2]], temp[set], temp[set], rotations[step])
				}
			}
		}
	}
	Comment("First double round: what depends on the counter (see firstDoubleRound).")
	firstDoubleRound(func(x, y, z, r int) {
		for set := range 2 {
			w := words[set]
			a.AddRotXorMem(w[x], w[y], w[z], temp[set], temp[set], r)
		}
	}, func(x, k int) {
		for set := range 2 {
			v := words[set][x].(reg.Register)
			VPXORD_BCST(word(pre, k), v, v)
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

	Comment("Feed forward and write the first state; the second state's",
		"spilled word stays in memory, so its register is scratch.")
	feed := func(w [16]reg.Register) {
		for k := range 16 {
			if k == 8 {
				continue
			}
			a.AddBcst(w[k], word(s, k))
		}
	}
	var wa [16]reg.Register
	for k := range 16 {
		wa[k] = z(k)
	}
	a.Load(wa[spill], slot(0))
	feed(wa)
	counter(temp[1], 0)
	a.Add(wa[8], temp[1])
	writeState(a, name+"_a", wa, 0, temp[1])

	var wb [16]reg.Register
	for k := range 16 {
		wb[k] = z(16 + k)
	}
	wb[spill] = z(0)
	a.Load(wb[spill], slot(1))
	feed(wb)
	counter(z(1), 1)
	a.Add(wb[8], z(1))
	writeState(a, name+"_b", wb, 16, z(1))

	ADDQ(U32(64*32), dst)
	ADDQ(U32(64*32), src)
	ADDL(U8(32), reg.EBX)
	DECQ(blocks)
	JNZ(LabelRef(name + "_batch"))

	MOVL(reg.EBX, word(s, 8))
	a.VZeroUpper()
	RET()
}

// writeState transposes a full 16-block vertical state (w[k] = word k of
// each block) and XORs it into blocks first..first+15 of src and dst, using
// free as the first scratch register.
func writeState(a arx.ISA, name string, w [16]reg.Register, first int, free reg.Register) {
	emit := emitter(a, name, false)
	var groups [4][4]reg.Register
	for g := range 4 {
		groups[g], free = a.Transpose4x4([4]reg.Register{w[4*g], w[4*g+1], w[4*g+2], w[4*g+3]}, free)
	}
	for j := range 4 {
		var blocks [4]reg.Register
		blocks, free = arx.Transpose128x4([4]reg.Register{groups[0][j], groups[1][j], groups[2][j], groups[3][j]}, free)
		for l := range 4 {
			emit(blocks[l], first+4*l+j, 0, nil)
		}
	}
}
