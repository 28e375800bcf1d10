package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
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

// ops returns the arx helpers for this instruction set at the given vector
// width in bytes: AVX-512 narrower than ZMM is AVX-512VL.
func (i isa) ops(width int) arx.ISA {
	switch {
	case i == sse:
		return arx.SSSE3
	case i == avx2:
		return arx.AVX2
	case width == 16:
		return arx.AVX512VL128
	case width == 32:
		return arx.AVX512VL256
	}
	return arx.AVX512
}

// word returns the memory operand of s[i].
func word(s reg.Register, i int) Mem { return Mem{Base: s, Disp: 4 * i} }
