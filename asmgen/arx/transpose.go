package arx

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Transpose4x4 transposes 4x4 matrices of 32-bit words held in rows r[0..3],
// one matrix per 128-bit lane: afterwards out[k] holds, in each 128-bit lane,
// word k of the four input rows of that lane. In a vertical kernel with r[k]
// = state word w+k of every block, out[k] lane L holds words w..w+3 of the
// block in 32-bit lane 4L+k of the input.
//
// It uses tmp as scratch and permutes registers rather than copying: the
// results are in out (which reuses r's registers and tmp), and free is the
// one register of the five left holding nothing useful.
func (i ISA) Transpose4x4(r [4]reg.Register, tmp reg.Register) (out [4]reg.Register, free reg.Register) {
	a, b, c, d, t := r[0], r[1], r[2], r[3], tmp
	if i.VEX {
		build.VPUNPCKLDQ(b, a, t)  // t = a0 b0 a1 b1
		build.VPUNPCKHDQ(b, a, b)  // b = a2 b2 a3 b3
		build.VPUNPCKLDQ(d, c, a)  // a = c0 d0 c1 d1
		build.VPUNPCKHDQ(d, c, c)  // c = c2 d2 c3 d3
		build.VPUNPCKLQDQ(a, t, d) // d = a0 b0 c0 d0
		build.VPUNPCKHQDQ(a, t, t) // t = a1 b1 c1 d1
		build.VPUNPCKLQDQ(c, b, a) // a = a2 b2 c2 d2
		build.VPUNPCKHQDQ(c, b, b) // b = a3 b3 c3 d3
		return [4]reg.Register{d, t, a, b}, c
	}
	build.MOVO(a, t)
	build.PUNPCKLLQ(b, t) // t = a0 b0 a1 b1
	build.PUNPCKHLQ(b, a) // a = a2 b2 a3 b3
	build.MOVO(c, b)
	build.PUNPCKLLQ(d, b) // b = c0 d0 c1 d1
	build.PUNPCKHLQ(d, c) // c = c2 d2 c3 d3
	build.MOVO(t, d)
	build.PUNPCKLQDQ(b, d) // d = a0 b0 c0 d0
	build.PUNPCKHQDQ(b, t) // t = a1 b1 c1 d1
	build.MOVO(a, b)
	build.PUNPCKLQDQ(c, b) // b = a2 b2 c2 d2
	build.PUNPCKHQDQ(c, a) // a = a3 b3 c3 d3
	return [4]reg.Register{d, t, b, a}, c
}

// Transpose128x4 transposes the 4x4 matrix of 128-bit lanes held in the ZMM
// registers r[0..3]: afterwards out[L] holds lane L of r[0], r[1], r[2] and
// r[3] in that order. After [ISA.Transpose4x4] on the four word groups of a
// 16-block vertical kernel, this turns group-major rows into whole 64-byte
// blocks. Like Transpose4x4 it permutes registers; free is the unused one.
func Transpose128x4(r [4]reg.Register, tmp reg.Register) (out [4]reg.Register, free reg.Register) {
	a, b, c, d, t := r[0], r[1], r[2], r[3], tmp
	build.VSHUFI32X4(operand.U8(0x44), b, a, t) // t = a0 a1 b0 b1
	build.VSHUFI32X4(operand.U8(0xee), b, a, a) // a = a2 a3 b2 b3
	build.VSHUFI32X4(operand.U8(0x44), d, c, b) // b = c0 c1 d0 d1
	build.VSHUFI32X4(operand.U8(0xee), d, c, c) // c = c2 c3 d2 d3
	build.VSHUFI32X4(operand.U8(0x88), b, t, d) // d = a0 b0 c0 d0
	build.VSHUFI32X4(operand.U8(0xdd), b, t, t) // t = a1 b1 c1 d1
	build.VSHUFI32X4(operand.U8(0x88), c, a, b) // b = a2 b2 c2 d2
	build.VSHUFI32X4(operand.U8(0xdd), c, a, a) // a = a3 b3 c3 d3
	return [4]reg.Register{d, t, b, a}, c
}

// JoinLow emits dst = (a's low 128-bit lane, b's low lane) and JoinHigh
// dst = (a's high lane, b's high lane), for YMM: after Transpose4x4 on word
// groups 0-3 and 4-7 of an 8-block vertical kernel, JoinLow of the k-th
// outputs is the first half of block k and JoinHigh that of block 4+k.
// VPERM2I128 has no EVEX form, so the registers must be among Y0-Y15: fine
// for AVX2 code, and for AVX-512VL code that keeps at most 16 YMM values
// live (otherwise avo hands out Y16-Y31 and the assembler rejects it).
func JoinLow(dst, a, b reg.Register) { build.VPERM2I128(operand.U8(0x20), b, a, dst) }

// JoinHigh is the high-lane counterpart of [JoinLow].
func JoinHigh(dst, a, b reg.Register) { build.VPERM2I128(operand.U8(0x31), b, a, dst) }

// Transpose16 turns 16 registers of the 16-lane vertical layout (register
// i = word i of blocks 0..15, AVX-512) into 16 registers each holding one
// whole block, in block order. It takes one more register as scratch.
func Transpose16(isa ISA, x []reg.Register) []reg.Register {
	var groups [4][4]reg.Register
	tmp := reg.Register(isa.Vec())
	for g := range 4 {
		groups[g], tmp = isa.Transpose4x4([4]reg.Register{x[4*g], x[4*g+1], x[4*g+2], x[4*g+3]}, tmp)
	}
	// groups[g][k] lane L = words 4g..4g+3 of block 4L+k.
	blocks := make([]reg.Register, 16)
	for k := range 4 {
		var out [4]reg.Register
		out, tmp = Transpose128x4([4]reg.Register{groups[0][k], groups[1][k], groups[2][k], groups[3][k]}, tmp)
		for l := range 4 {
			blocks[4*l+k] = out[l]
		}
	}
	return blocks
}
