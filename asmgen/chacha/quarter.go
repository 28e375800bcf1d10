package main

import (
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// quarterRounds emits the ChaCha quarter round (RFC 8439 section 2.1) on
// each (a, b, c, d) of qs, step by step across all of them so that the
// independent dependency chains sit next to each other in the instruction
// stream. tmp[k] is scratch for qs[k]'s shift-based rotations (unused with
// AVX-512, where VPROLD rotates in place).
func quarterRounds(isa arx.ISA, qs [][4]Register, tmp []Register) {
	rot := func(x func(q [4]Register) Register, n int, shuf Op) {
		for k, q := range qs {
			var t Register
			if k < len(tmp) {
				t = tmp[k]
			}
			isa.RotL(x(q), n, t, shuf)
		}
	}
	a := func(q [4]Register) Register { return q[0] }
	b := func(q [4]Register) Register { return q[1] }
	c := func(q [4]Register) Register { return q[2] }
	d := func(q [4]Register) Register { return q[3] }
	add := func(x, y func(q [4]Register) Register) {
		for _, q := range qs {
			isa.Add(x(q), y(q))
		}
	}
	xor := func(x, y func(q [4]Register) Register) {
		for _, q := range qs {
			isa.Xor(x(q), y(q))
		}
	}
	var rot16, rot8 Op
	if !isa.EVEX {
		rot16, rot8 = arx.Rot16(), arx.Rot8()
	}
	add(a, b)
	xor(d, a)
	rot(d, 16, rot16)
	add(c, d)
	xor(b, c)
	rot(b, 12, nil)
	add(a, b)
	xor(d, a)
	rot(d, 8, rot8)
	add(c, d)
	xor(b, c)
	rot(b, 7, nil)
}

// The quarter rounds of a double round, as indices of the 16 state words.
var (
	columns   = [4][4]int{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}
	diagonals = [4][4]int{{0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14}}
)

// pick returns the registers of x named by the quarter rounds idx.
func pick(x []Register, idx ...[4]int) [][4]Register {
	qs := make([][4]Register, len(idx))
	for k, q := range idx {
		qs[k] = [4]Register{x[q[0]], x[q[1]], x[q[2]], x[q[3]]}
	}
	return qs
}
