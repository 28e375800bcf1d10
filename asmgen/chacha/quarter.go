package main

import (
	. "github.com/mmcloughlin/avo/build"
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

// quarterRoundsLow is quarterRounds for a row kernel on XMM or YMM with
// AVX-512VL, whose one dependency chain sets its speed: each step
// z = (z ^ x) <<< n is computed as (z <<< n) ^ (x << n) ^ (x >> (32-n)),
// three-way XORed with VPTERNLOGD. z <<< n is ready before x is, so the
// chain runs through an addition, the two shifts side by side and the
// XOR, 3 cycles, where add, xor and VPROLD take 4 on CPUs whose VPROLD
// has a latency of 2 (AMD Zen 4). It executes five instructions a step
// instead of three, which costs throughput: on ZMM, and with two sets,
// it was slower (see docs/KERNELS.md). t1 and t2 are scratch, per set.
func quarterRoundsLow(qs [][4]Register, t1, t2 []Register) {
	step := func(x, y, z, n int) {
		for _, q := range qs {
			VPROLD(U8(n), q[z], q[z])
		}
		for _, q := range qs {
			VPADDD(q[y], q[x], q[x])
		}
		for k, q := range qs {
			VPSLLD(U8(n), q[x], t1[k])
			VPSRLD(U8(32-n), q[x], t2[k])
		}
		for k, q := range qs {
			VPTERNLOGD(U8(0x96), t1[k], t2[k], q[z])
		}
	}
	step(0, 1, 3, 16)
	step(2, 3, 1, 12)
	step(0, 1, 3, 8)
	step(2, 3, 1, 7)
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
