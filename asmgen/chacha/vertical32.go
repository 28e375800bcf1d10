package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// vertical32 emits an AVX-512 kernel in the vertical layout: ZMM register i
// holds state word i of 16 blocks, one per lane, so a double round is eight
// quarter rounds on whole registers and VPROLD does every rotation. sets
// independent 16-block groups are interleaved; with two, all 32 ZMM registers
// hold state during the rounds, which gives the scheduler twice the
// independent dependency chains.
//
// With sets == 1 the kernel takes any number of blocks: a final group of
// fewer than 16 computes all 16 and stores only the blocks asked for. With
// sets == 2 len(src) must be a multiple of 2048.
func vertical32(name string, sets int) { vertical32Head(name, sets, false) }

// headSignature is the signature of the kernel that also computes a head
// block (see vertical32Head).
var headSignature = arx.SignatureWith("head *[64]byte")

// vertical32Head is vertical32, and with head (sets == 1 only) the kernel
// first writes the key stream block at the counter s[12] to head, computed
// in general registers beside the 16-block group (see scalarHead): a
// single block in a kernel call of its own is one long dependency chain,
// and here it runs on otherwise idle ports instead. The message blocks
// then start at counter s[12] + 1, and s[12] advances by their number plus
// one. That is block 0 of an RFC 8439 AEAD (the Poly1305 key) and the
// first message blocks in one call.
func vertical32Head(name string, sets int, head bool) {
	isa := arx.AVX512
	if head && sets != 1 {
		panic("vertical32Head: a head block only with one set")
	}
	sig := arx.Signature
	if head {
		sig = headSignature
	}
	TEXT(name, 0, sig)
	Pragma("noescape")
	switch {
	case head:
		Doc(name+" writes the ChaCha block at the counter s[12] to head and XORs the",
			"next len(src)/64 blocks into dst, 16 at a time in the vertical layout (AVX-512);",
			"the head block runs in general registers beside the first group. len(src) >= 64.")
	case sets == 1:
		Doc(name+" XORs len(src)/64 ChaCha blocks into dst, 16 at a time in the",
			"vertical layout (AVX-512); a last group of fewer than 16 blocks stores only those.")
	default:
		Doc(fmt.Sprintf("%s XORs len(src)/64 ChaCha blocks into dst, %d at a time in two", name, 16*sets),
			"interleaved 16-block vertical groups (AVX-512). len(src) must be a multiple of 2048.")
	}
	a := arx.LoadArgs()
	var sh *scalarHead
	if head {
		sh = newScalarHead(a)
	}
	f := arx.NewFrame(isa, 16+16+sets+1)
	w := setupWords(isa, f, a, sets)
	spill := f.Slots(1)[0]
	group := 16 * sets

	loop, done, partial := name+"_loop", name+"_done", name+"_partial"
	Label(loop)
	if sets == 1 {
		CMPQ(a.Blocks, U8(0))
		JE(LabelRef(done))
	} else {
		CMPQ(a.Blocks, U8(group))
		JB(LabelRef(done))
	}

	x := make([][]Register, sets)
	for set := range x {
		x[set] = make([]Register, 16)
		for _, i := range columns[0] {
			x[set][i] = isa.Vec()
		}
		isa.Load(x[set][0], w.orig[0])
		isa.Load(x[set][4], w.orig[4])
		isa.Load(x[set][8], w.orig[8])
		isa.Load(x[set][12], w.ctr[set])
	}
	Comment("First double round: columns 1-3 of the column round are precomputed.")
	var qs [][4]Register
	for set := range x {
		qs = append(qs, pick(x[set], columns[0])...)
	}
	quarterRounds(isa, qs, nil)
	for set := range x {
		for i := range 16 {
			if i%4 != 0 {
				x[set][i] = isa.Vec()
				isa.Load(x[set][i], w.pre[i])
			}
		}
	}
	doubleHalf(isa, x, diagonals)

	if !head {
		rounds := GP64()
		MOVQ(a.Rounds, rounds)
		DECQ(rounds)
		Label(name + "_rounds")
		doubleHalf(isa, x, columns)
		doubleHalf(isa, x, diagonals)
		DECQ(rounds)
		JNZ(LabelRef(name + "_rounds"))
	} else {
		// The head block needs every general register: the round
		// counter lives on the stack, and sh.begin parks the rest.
		count := AllocLocal(8)
		t := GP64()
		MOVQ(a.Rounds, t)
		DECQ(t)
		MOVQ(t, count)
		sh.begin(a.S.Base, a.Rounds, a.Dst, a.Src, a.Blocks, a.Total, f.Base.Base)
		sh.double()
		Label(name + "_rounds")
		doubleHalf(isa, x, columns)
		sh.half(columns)
		doubleHalf(isa, x, diagonals)
		sh.half(diagonals)
		DECQ(count)
		JNZ(LabelRef(name + "_rounds"))
		sh.end()
	}

	Comment("Feed-forward: add the input words.")
	for set := range x {
		for i := range 16 {
			if i == 12 {
				isa.Add(x[set][i], w.ctr[set])
			} else {
				isa.Add(x[set][i], w.orig[i])
			}
		}
	}

	if sets == 1 {
		CMPQ(a.Blocks, U8(16))
		JB(LabelRef(partial))
	}
	// Two sets leave no register for the transposition: park one row of the
	// second set on the stack meanwhile.
	if sets == 2 {
		isa.Store(spill, x[1][15])
	}
	blocks := arx.Transpose16(isa, x[0])
	for b, v := range blocks {
		a.XorBlock(isa, b, 0, v, false)
	}
	if sets == 2 {
		x[1][15] = isa.Vec()
		isa.Load(x[1][15], spill)
		blocks := arx.Transpose16(isa, x[1])
		for b, v := range blocks {
			a.XorBlock(isa, 16+b, 0, v, false)
		}
	}
	ADDQ(U32(64*group), a.Src)
	ADDQ(U32(64*group), a.Dst)
	SUBQ(U8(group), a.Blocks)
	for set := range sets {
		c := isa.Vec()
		isa.Load(c, w.ctr[set])
		isa.Add(c, arx.Splat(group))
		isa.Store(w.ctr[set], c)
	}
	JMP(LabelRef(loop))

	if sets == 1 {
		Label(partial)
		Comment("Fewer than 16 blocks left: store only those.")
		blocks := arx.Transpose16(isa, x[0])
		for b, v := range blocks {
			if b > 0 {
				CMPQ(a.Blocks, U8(b))
				JBE(LabelRef(done))
			}
			a.XorBlock(isa, b, 0, v, false)
		}
	}

	Label(done)
	a.Finish(isa, 12)
}

// doubleHalf emits one half of a double round (the column or the diagonal
// quarter rounds) for every interleaved set of x.
func doubleHalf(isa arx.ISA, x [][]Register, half [4][4]int) {
	var qs [][4]Register
	for set := range x {
		qs = append(qs, pick(x[set], half[0], half[1], half[2], half[3])...)
	}
	quarterRounds(isa, qs, nil)
}
