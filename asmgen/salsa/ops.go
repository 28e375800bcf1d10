package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// isa is the instruction set a kernel is written in. It decides the
// instruction forms (two-operand SSE, three-operand VEX, EVEX with VPROLD)
// and, for vertical kernels, the register width.
type isa int

const (
	sse    isa = iota // SSE2 instructions on XMM, two-operand forms
	avx2              // VEX on YMM, registers 0-15 only
	avx512            // EVEX: VPROLD, mask registers, 32 vector registers
)

func (i isa) String() string {
	return [...]string{"SSSE3", "AVX2", "AVX512"}[i]
}

// bytes is the width of a vector register the vertical kernel uses.
func (i isa) bytes() int { return [...]int{16, 32, 64}[i] }

// vec returns vector register n of the given width in bytes.
func vec(width, n int) reg.VecPhysical {
	x := []reg.VecPhysical{reg.X0, reg.X1, reg.X2, reg.X3, reg.X4, reg.X5, reg.X6, reg.X7,
		reg.X8, reg.X9, reg.X10, reg.X11, reg.X12, reg.X13, reg.X14, reg.X15,
		reg.X16, reg.X17, reg.X18, reg.X19, reg.X20, reg.X21, reg.X22, reg.X23,
		reg.X24, reg.X25, reg.X26, reg.X27, reg.X28, reg.X29, reg.X30, reg.X31}
	y := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7,
		reg.Y8, reg.Y9, reg.Y10, reg.Y11, reg.Y12, reg.Y13, reg.Y14, reg.Y15,
		reg.Y16, reg.Y17, reg.Y18, reg.Y19, reg.Y20, reg.Y21, reg.Y22, reg.Y23,
		reg.Y24, reg.Y25, reg.Y26, reg.Y27, reg.Y28, reg.Y29, reg.Y30, reg.Y31}
	z := []reg.VecPhysical{reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
		reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
		reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
		reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31}
	switch width {
	case 16:
		return x[n]
	case 32:
		return y[n]
	case 64:
		return z[n]
	}
	panic(fmt.Sprintf("no %d-byte vector registers", width))
}

func isMem(o Op) bool {
	_, ok := o.(Mem)
	return ok
}

// The Salsa20 quarter rounds as word indices (a, b, c, d): the column round,
// then the row round. A quarter round updates b, c, d, a in turn, each with
// the rotated sum of the two words updated just before it.
var (
	columnRound = [4][4]int{{0, 4, 8, 12}, {5, 9, 13, 1}, {10, 14, 2, 6}, {15, 3, 7, 11}}
	rowRound    = [4][4]int{{0, 1, 2, 3}, {5, 6, 7, 4}, {10, 11, 8, 9}, {15, 12, 13, 14}}
)

// rotations of the four steps of a quarter round.
var rotations = [4]int{7, 9, 13, 18}

// quarterSteps returns the four steps of the quarter round (a, b, c, d) as
// (x, y, z, r): x ^= rotl(y + z, r).
func quarterSteps(q [4]int) [4][3]int {
	a, b, c, d := q[0], q[1], q[2], q[3]
	return [4][3]int{{b, a, d}, {c, b, a}, {d, c, b}, {a, d, c}}
}

// arx emits x ^= rotl(y + z, r) for vectors. x, y and z are registers or
// (for the register-starved SSE and AVX2 kernels) memory operands; t and u
// are scratch registers. With VPROLD it is three instructions; otherwise the
// rotation is a shift pair XORed into x one half at a time, which avoids a
// separate OR.
func arx(i isa, x, y, z Op, r int, t, u reg.VecPhysical) {
	if isMem(y) {
		y, z = z, y
	}
	switch i {
	case sse:
		MOVO(y, t) // y may be memory: the SSE kernels keep their stack 16-byte aligned
		PADDL(z, t)
		MOVO(t, u)
		PSLLL(U8(r), t)
		PSRLL(U8(32-r), u)
		if isMem(x) {
			PXOR(u, t)
			PXOR(x, t)
			MOVO(t, x)
		} else {
			PXOR(t, x)
			PXOR(u, x)
		}
	case avx2:
		if isMem(y) {
			VMOVDQU(y, t)
			VPADDD(z, t, t)
		} else {
			VPADDD(z, y, t)
		}
		VPSLLD(U8(r), t, u)
		VPSRLD(U8(32-r), t, t)
		if isMem(x) {
			VPXOR(u, t, t)
			VPXOR(x, t, t)
			VMOVDQU(t, x)
		} else {
			VPXOR(u, x, x)
			VPXOR(t, x, x)
		}
	case avx512:
		VPADDD(z, y, t)
		VPROLD(U8(r), t, t)
		VPXORD(t, x, x)
	}
}

// vadd emits dst += src.
func vadd(i isa, src Op, dst reg.VecPhysical) {
	switch i {
	case sse:
		PADDL(src, dst)
	case avx2:
		VPADDD(src, dst, dst)
	default:
		VPADDD(src, dst, dst)
	}
}

// xorStore emits the XOR of v with the input at in and stores it at out,
// using scratch t for SSE (whose unaligned loads cannot fold into PXOR).
func xorStore(i isa, v reg.VecPhysical, in, out Mem, t reg.VecPhysical) {
	switch i {
	case sse:
		MOVOU(in, t)
		PXOR(v, t)
		MOVOU(t, out)
	case avx2:
		VPXOR(in, v, v)
		VMOVDQU(v, out)
	default:
		switch v.Size() {
		case 64:
			VPXORD(in, v, v)
			VMOVDQU64(v, out)
		default:
			VPXOR(in, v, v)
			VMOVDQU(v, out)
		}
	}
}

// transpose4 emits a 4x4 transpose of 32-bit words within each 128-bit lane
// of w0..w3, leaving word j of each input in register j, using t0..t3 as
// scratch: afterwards w[j] lane L holds {w0[4L+j], w1[4L+j], w2[4L+j],
// w3[4L+j]}.
func transpose4(i isa, w [4]reg.VecPhysical, t [4]reg.VecPhysical) {
	if i == sse {
		MOVO(w[0], t[0])
		PUNPCKLLQ(w[1], t[0])
		MOVO(w[0], t[1])
		PUNPCKHLQ(w[1], t[1])
		MOVO(w[2], t[2])
		PUNPCKLLQ(w[3], t[2])
		MOVO(w[2], t[3])
		PUNPCKHLQ(w[3], t[3])
		MOVO(t[0], w[0])
		PUNPCKLQDQ(t[2], w[0])
		MOVO(t[0], w[1])
		PUNPCKHQDQ(t[2], w[1])
		MOVO(t[1], w[2])
		PUNPCKLQDQ(t[3], w[2])
		MOVO(t[1], w[3])
		PUNPCKHQDQ(t[3], w[3])
		return
	}
	VPUNPCKLDQ(w[1], w[0], t[0])
	VPUNPCKHDQ(w[1], w[0], t[1])
	VPUNPCKLDQ(w[3], w[2], t[2])
	VPUNPCKHDQ(w[3], w[2], t[3])
	VPUNPCKLQDQ(t[2], t[0], w[0])
	VPUNPCKHQDQ(t[2], t[0], w[1])
	VPUNPCKLQDQ(t[3], t[1], w[2])
	VPUNPCKHQDQ(t[3], t[1], w[3])
}

// transposeLanes emits a 4x4 transpose of the 128-bit lanes of ZMM
// registers r0..r3 into out0..out3 (out[L] = {r0[L], r1[L], r2[L], r3[L]}),
// using u0..u3 as scratch.
func transposeLanes(r, u, out [4]reg.VecPhysical) {
	VSHUFI32X4(U8(0x44), r[1], r[0], u[0])
	VSHUFI32X4(U8(0xee), r[1], r[0], u[1])
	VSHUFI32X4(U8(0x44), r[3], r[2], u[2])
	VSHUFI32X4(U8(0xee), r[3], r[2], u[3])
	VSHUFI32X4(U8(0x88), u[2], u[0], out[0])
	VSHUFI32X4(U8(0xdd), u[2], u[0], out[1])
	VSHUFI32X4(U8(0x88), u[3], u[1], out[2])
	VSHUFI32X4(U8(0xdd), u[3], u[1], out[3])
}

// counterLanes is the per-lane offset added to the block counter: lane k of
// a vertical kernel computes block k.
func counterLanes(name string, n int) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for k := range n {
		DATA(4*k, U32(k))
	}
	return m
}

// word returns the memory operand of s[i].
func word(s reg.Register, i int) Mem { return Mem{Base: s, Disp: 4 * i} }
