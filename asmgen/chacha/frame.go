package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// args are a kernel's parameters in general registers.
type args struct {
	s        Mem       // the state words
	rounds   Register  // double rounds still to do: loaded as rounds/2
	dst, src Register  // advancing block pointers
	blocks   Register  // blocks still to do
	total    GPVirtual // blocks of the whole call, for s[12]
}

// loadArgs loads the parameters of signature.
func loadArgs() args {
	var a args
	a.s = Mem{Base: Load(Param("s"), GP64())}
	a.rounds = Load(Param("rounds"), GP64())
	SHRQ(U8(1), a.rounds)
	a.dst = Load(Param("dst").Base(), GP64())
	a.src = Load(Param("src").Base(), GP64())
	a.blocks = Load(Param("src").Len(), GP64())
	SHRQ(U8(6), a.blocks)
	a.total = GP64()
	MOVQ(a.blocks, a.total)
	return a
}

// finish advances s[12] by the blocks of the call and returns.
func (a args) finish(isa arx.ISA) {
	ADDL(a.total.As32(), a.s.Offset(48))
	isa.VZeroUpper()
	RET()
}

// frame is a 64-byte aligned stack area of vector slots: kernels keep the
// broadcast input words there for the feed-forward addition (a full-width,
// aligned memory operand folds into the add), the precomputed first
// quarter rounds, counters and spilled rows.
type frame struct {
	isa  arx.ISA
	base Mem
	next int
}

// newFrame reserves n vector slots.
func newFrame(isa arx.ISA, n int) *frame {
	local := AllocLocal(n*isa.Bytes + 64)
	p := GP64()
	LEAQ(local, p)
	ADDQ(U8(63), p)
	ANDQ(I8(-64), p)
	return &frame{isa: isa, base: Mem{Base: p}}
}

// slots returns n consecutive slots.
func (f *frame) slots(n int) []Mem {
	m := make([]Mem, n)
	for k := range m {
		m[k] = f.base.Offset(f.next * f.isa.Bytes)
		f.next++
	}
	return m
}

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
func setupWords(f *frame, a args, sets int) words {
	isa := f.isa
	w := words{orig: f.slots(16), pre: f.slots(16), ctr: f.slots(sets)}
	tmp := GP32()
	for i := range 16 {
		v := isa.Vec()
		isa.Broadcast(v, a.s.Offset(4*i), tmp)
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
		isa.Add(c, laneIndex(isa, set))
		isa.Store(w.ctr[set], c)
	}
	return w
}

// laneIndex returns a full-width table of lane numbers plus set*lanes, as a
// memory operand for Add.
func laneIndex(isa arx.ISA, set int) Mem {
	var t [16]uint32
	for k := range t {
		t[k] = uint32(set*isa.Lanes() + k%isa.Lanes())
	}
	if set == 0 && isa.Lanes() == 16 {
		return arx.LaneIndex()
	}
	return arx.Words(tableName("lane", isa.Lanes(), set), t)
}

// splat returns a table with n in every lane.
func splat(n int) Mem {
	var t [16]uint32
	for k := range t {
		t[k] = uint32(n)
	}
	return arx.Words(tableName("splat", n, 0), t)
}

func tableName(kind string, a, b int) string {
	return kind + itoa(a) + "_" + itoa(b) + "_chacha"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
