package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// vertical16 emits a vertical-layout kernel for an ISA with 16 vector
// registers (AVX2: 8 blocks per group, SSSE3: 4): register i holds word i of
// every block of the group. Sixteen words and two rotation temporaries do
// not fit in 16 registers, so two of the words 8-11 live on the stack at any
// time; the quarter rounds run in pairs, and between pairs the two words the
// next pair needs swap places with two it does not (the way OpenSSL's 8x
// AVX2 code budgets its registers). The kernel takes any number of blocks: a
// last group smaller than the width stores only the blocks asked for.
func vertical16(name string, isa arx.ISA) {
	lanes := isa.Lanes()
	TEXT(name, 0, arx.Signature)
	Pragma("noescape")
	Doc(fmt.Sprintf("%s XORs len(src)/64 ChaCha blocks into dst, %d at a time in the", name, lanes),
		fmt.Sprintf("vertical layout (%s); a last group of fewer than %d blocks stores only those.", isa.Name, lanes))
	a := arx.LoadArgs()
	f := arx.NewFrame(isa, 16+16+1+4)
	w := setupWords(isa, f, a, 1)
	home := map[int]Mem{}
	for i, m := range f.Slots(4) {
		home[8+i] = m
	}

	loop, done, partial := name+"_loop", name+"_done", name+"_partial"
	Label(loop)
	CMPQ(a.Blocks, U8(0))
	JE(LabelRef(done))

	x := make([]Register, 16)
	for _, i := range columns[0] {
		x[i] = isa.Vec()
	}
	isa.Load(x[0], w.orig[0])
	isa.Load(x[4], w.orig[4])
	isa.Load(x[8], w.orig[8])
	isa.Load(x[12], w.ctr[0])
	// Words 8-11 keep one virtual register each for the whole kernel: the
	// rounds loop is emitted once, so a word must be in the same register
	// when the loop jumps back as when it was first entered.
	fixed := map[int]Register{8: x[8], 9: isa.Vec(), 10: isa.Vec(), 11: isa.Vec()}
	swap := func(out []int, in []int, from map[int]Mem) {
		for _, i := range out {
			isa.Store(home[i], x[i])
			x[i] = nil
		}
		for _, i := range in {
			x[i] = fixed[i]
			isa.Load(x[i], from[i])
		}
	}
	Comment("First double round: columns 1-3 of the column round are precomputed.")
	quarterRounds(isa, pick(x, columns[0]), []Register{isa.Vec()})
	for i := range 16 {
		if i%4 != 0 && i != 10 && i != 11 {
			x[i] = isa.Vec()
			if i == 9 {
				x[i] = fixed[9]
			}
			isa.Load(x[i], w.pre[i])
		}
	}
	pre := map[int]Mem{10: w.pre[10], 11: w.pre[11]}
	pair := func(q ...[4]int) {
		quarterRounds(isa, pick(x, q...), []Register{isa.Vec(), isa.Vec()})
	}
	swap([]int{8, 9}, []int{10, 11}, pre)
	pair(diagonals[0], diagonals[1])
	swap([]int{10, 11}, []int{8, 9}, home)
	pair(diagonals[2], diagonals[3])

	rounds := GP64()
	MOVQ(a.Rounds, rounds)
	DECQ(rounds)
	Label(name + "_rounds")
	pair(columns[0], columns[1])
	swap([]int{8, 9}, []int{10, 11}, home)
	pair(columns[2], columns[3])
	pair(diagonals[0], diagonals[1])
	swap([]int{10, 11}, []int{8, 9}, home)
	pair(diagonals[2], diagonals[3])
	DECQ(rounds)
	JNZ(LabelRef(name + "_rounds"))

	CMPQ(a.Blocks, U8(lanes))
	JB(LabelRef(partial))
	output16(isa, a, w, home, x, false)
	ADDQ(U32(64*lanes), a.Src)
	ADDQ(U32(64*lanes), a.Dst)
	SUBQ(U8(lanes), a.Blocks)
	c := isa.Vec()
	isa.Load(c, w.ctr[0])
	isa.Add(c, arx.Splat(lanes))
	isa.Store(w.ctr[0], c)
	JMP(LabelRef(loop))

	Label(partial)
	Comment("Fewer blocks left than the width: store only those.")
	output16(isa, a, w, home, x, true)

	Label(done)
	a.Finish(isa, 12)
}

// output16 adds the input words to the final state x (words 10 and 11 are
// still in their stack homes), transposes it into blocks and XORs them into
// dst. With guarded set, a block is stored only if a.blocks says it exists.
func output16(isa arx.ISA, a arx.Args, w words, home map[int]Mem, x []Register, guarded bool) {
	x = append([]Register(nil), x...)
	store := func(block, offset int, v Register) { a.XorBlock(isa, block, offset, v, guarded) }
	feed := func(from, to int) {
		for i := from; i < to; i++ {
			if x[i] == nil {
				x[i] = isa.Vec()
				isa.Load(x[i], home[i])
			}
			if i == 12 {
				isa.Add(x[i], w.ctr[0])
			} else {
				isa.Add(x[i], w.orig[i])
			}
		}
	}
	group := func(g int, tmp Register) ([4]Register, Register) {
		return isa.Transpose4x4([4]Register{x[4*g], x[4*g+1], x[4*g+2], x[4*g+3]}, tmp)
	}
	if isa.Bytes == 16 {
		// Transposed group g holds bytes 16g..16g+15 of blocks 0-3.
		for g := range 4 {
			feed(4*g, 4*g+4)
			out, _ := group(g, isa.Vec())
			for k := range 4 {
				store(k, 16*g, out[k])
			}
		}
		return
	}
	// YMM: a transposed group holds its words of block k in the low lane and
	// of block 4+k in the high lane; joining groups 2h and 2h+1 gives bytes
	// 32h..32h+31 of those blocks.
	for h := range 2 {
		feed(8*h, 8*h+8)
		lo, free := group(2*h, isa.Vec())
		hi, _ := group(2*h+1, free)
		for k := range 4 {
			t := isa.Vec()
			arx.JoinLow(t, lo[k], hi[k])
			store(k, 32*h, t)
		}
		for k := range 4 {
			arx.JoinHigh(lo[k], lo[k], hi[k])
			store(4+k, 32*h, lo[k])
		}
	}
}
