package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// vertical32 emits an AVX-512 kernel in the vertical layout: ZMM register i
// holds state word i of 16 blocks, one per lane, so a round is sixteen
// steps on whole registers and VPROLD does every rotation. sets
// independent 16-block states are interleaved. One state has four
// independent quarter-round chains per round; where chains merge between
// rounds the ports idle unless a second state has work ready, and the
// rotations all compete for the one port that runs VPROLD. Two states keep
// both ZMM ports busy.
//
// With one set the kernel takes any number of blocks: a final group of
// fewer than 16 computes all 16 and stores only the blocks asked for. With
// two, len(src) must be a multiple of 2048, and Salsa20's scratch register
// per step does not fit beside 32 state words: each state keeps word 3 in
// memory, where its steps fold the load and pay one store.
func vertical32(name string, sets int) {
	if sets != 1 && sets != 2 {
		panic("vertical32: one set or two")
	}
	isa := arx.AVX512
	group := 16 * sets
	TEXT(name, 0, preSignature)
	Pragma("noescape")
	if sets == 1 {
		Doc(name+" XORs len(src)/64 Salsa20 blocks into dst, 16 at a time in the",
			"vertical layout (AVX-512); a last group of fewer than 16 blocks stores only those.")
	} else {
		Doc(fmt.Sprintf("%s XORs len(src)/64 Salsa20 blocks into dst, %d at a time in two", name, group),
			fmt.Sprintf("interleaved 16-block vertical states (AVX-512). len(src) must be a multiple of %d.", 64*group))
	}
	a := arx.LoadArgs()
	pre := Mem{Base: Load(Param("pre"), GP64())}
	ctr := GP32()
	MOVL(a.S.Offset(4*8), ctr)

	// The register budget. One set: the state, a scratch register per
	// quarter round, and the counter lanes kept for the feed-forward. Two
	// sets: word 3 of each in the frame and one scratch register per set;
	// the counter lanes are computed again for the feed-forward.
	const spilled = 3
	states := make([]vstate, sets)
	scratch := make([][]Register, sets)
	var slots []Mem
	if sets > 1 {
		slots = arx.NewFrame(isa, sets).Slots(sets)
	}
	for set := range states {
		for w := range 16 {
			states[set][w] = isa.Vec()
		}
		if sets > 1 {
			states[set][spilled] = slots[set]
			scratch[set] = []Register{isa.Vec()}
		} else {
			scratch[set] = isa.Vecs(4)
		}
	}
	var lanes Register
	if sets == 1 {
		lanes = isa.Vec()
	}
	// counters sets v to the block counters of the lanes of set.
	counters := func(v Register, set int) {
		VPBROADCASTD(ctr, v)
		isa.Add(v, arx.LaneCounters(isa, set))
	}

	l := beginLoop(name, a)
	Comment("Load the words: the counter lanes, the rest of quarter round (0, 4, 8, 12),",
		"and the other twelve as they leave the first column round (see pre).")
	for set, w := range states {
		loadWords(isa, w, scratch[set][0], func(v Register, k int) { isa.Broadcast(v, input(a, pre, k), nil) })
	}
	for set, w := range states {
		if lanes != nil {
			counters(lanes, set)
			isa.Copy(w[8].(Register), lanes)
			continue
		}
		counters(w[8].(Register), set)
	}

	verticalRounds(isa, a, name+"_double", states, func(set, q int) (Register, Register) {
		t := scratch[set][q%len(scratch[set])]
		return t, t
	}, func(set, x, k int) {
		v := states[set][x].(Register)
		VPXORD_BCST(pre.Offset(4*k), v, v)
	})

	// output adds the input words to each state, transposes it and XORs it
	// into dst, state by state: the second state's spilled word stays in
	// memory while the first is written.
	output := func(guarded bool) {
		Comment("Feed forward: add the input words; transpose and write out, state by state.")
		for set, state := range states {
			var w [16]Register
			for k, o := range state {
				if m, ok := o.(Mem); ok {
					w[k] = isa.Vec()
					isa.Load(w[k], m)
					continue
				}
				w[k] = o.(Register)
			}
			for k := range 16 {
				switch {
				case k != 8:
					isa.AddBcst(w[k], a.S.Offset(4*k))
				case lanes != nil:
					isa.Add(w[k], lanes)
				default:
					c := isa.Vec()
					counters(c, set)
					isa.Add(w[k], c)
				}
			}
			transpose16(a, w, 16*set, isa.Vec(), guarded)
		}
	}
	l.endLoop(isa, group, sets == 1, output, func() { ADDL(U8(group), ctr) })
}
