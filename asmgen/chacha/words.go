package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// words lays out the state for a vertical kernel: orig[i] holds word i of s
// in every lane, pre[i] the words after the first column round's quarter
// rounds 1, 2 and 3 (columns that do not contain the counter, so they are
// the same for every block of the call; pre[0], pre[4], pre[8] and pre[12]
// are unused), and ctr the per-lane counters of the next group: s[12] plus
// the lane index, then plus sets*lanes per group.
type words struct {
	orig, pre []Mem
	ctr       []Mem // one per interleaved set
}

// setupWords fills the frame slots of [words] for sets interleaved groups of
// isa.Lanes() blocks each.
func setupWords(isa arx.ISA, f *arx.Frame, a arx.Args, sets int) words {
	w := words{orig: f.Slots(16), pre: f.Slots(16), ctr: f.Slots(sets)}
	tmp := GP32()
	for i := range 16 {
		v := isa.Vec()
		isa.Broadcast(v, a.S.Offset(4*i), tmp)
		isa.Store(w.orig[i], v)
	}
	for col := 1; col < 4; col++ {
		r := [4]Register{}
		for k := range 4 {
			r[k] = isa.Vec()
			isa.Load(r[k], w.orig[col+4*k])
		}
		quarterRounds(isa, [][4]Register{r}, []Register{isa.Vec()})
		for k := range 4 {
			isa.Store(w.pre[col+4*k], r[k])
		}
	}
	for set := range sets {
		c := isa.Vec()
		isa.Load(c, w.orig[12])
		isa.Add(c, arx.LaneCounters(isa, set))
		isa.Store(w.ctr[set], c)
	}
	return w
}
