package arx

import (
	"fmt"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Add emits dst += src, lane-wise modulo 2^32. src is a register, or a
// memory operand of the full vector width (16-byte aligned for SSSE3).
func (i ISA) Add(dst reg.Register, src operand.Op) {
	if i.VEX {
		build.VPADDD(src, dst, dst)
		return
	}
	build.PADDL(src, dst)
}

// Add3 emits dst = a + b, lane-wise; dst may equal a. On SSSE3 it costs a
// copy unless dst is a.
func (i ISA) Add3(dst, a reg.Register, b operand.Op) {
	if i.VEX {
		build.VPADDD(b, a, dst)
		return
	}
	i.Copy(dst, a)
	build.PADDL(b, dst)
}

// AddBcst emits dst += the 32-bit word at m broadcast to every lane, folding
// the load into the addition (AVX-512 only).
func (i ISA) AddBcst(dst reg.Register, m operand.Mem) {
	if !i.EVEX {
		panic("arx: AddBcst needs AVX-512")
	}
	build.VPADDD_BCST(m, dst, dst)
}

// Xor emits dst ^= src. src is a register, or a memory operand of the full
// vector width (16-byte aligned for SSSE3).
func (i ISA) Xor(dst reg.Register, src operand.Op) {
	switch {
	case i.EVEX:
		build.VPXORD(src, dst, dst)
	case i.VEX:
		build.VPXOR(src, dst, dst)
	default:
		build.PXOR(src, dst)
	}
}

// Or emits dst |= src.
func (i ISA) Or(dst reg.Register, src operand.Op) {
	switch {
	case i.EVEX:
		build.VPORD(src, dst, dst)
	case i.VEX:
		build.VPOR(src, dst, dst)
	default:
		build.POR(src, dst)
	}
}

// Copy emits dst = src (register to register).
func (i ISA) Copy(dst, src reg.Register) {
	switch {
	case i.EVEX:
		build.VMOVDQA32(src, dst)
	case i.VEX:
		build.VMOVDQA(src, dst)
	default:
		build.MOVO(src, dst)
	}
}

// RotL emits x = x <<< n in every 32-bit lane.
//
//   - AVX-512 (any width): one VPROLD; tmp and shuf are unused.
//   - n == 16 or n == 8 with shuf set: one PSHUFB/VPSHUFB with shuf, a
//     register or memory operand holding [Rot16]/[Rot8]'s table (for SSSE3 a
//     memory operand must be 16-byte aligned; the tables are).
//   - otherwise: shift left into x, shift right into tmp, OR (tmp is
//     clobbered).
func (i ISA) RotL(x reg.Register, n int, tmp reg.Register, shuf operand.Op) {
	if n <= 0 || n >= 32 {
		panic(fmt.Sprintf("arx: rotation by %d", n))
	}
	if i.EVEX {
		build.VPROLD(operand.U8(n), x, x)
		return
	}
	if shuf != nil && (n == 16 || n == 8) {
		if i.VEX {
			build.VPSHUFB(shuf, x, x)
		} else {
			build.PSHUFB(shuf, x)
		}
		return
	}
	if i.VEX {
		build.VPSRLD(operand.U8(32-n), x, tmp)
		build.VPSLLD(operand.U8(n), x, x)
		build.VPOR(tmp, x, x)
		return
	}
	build.MOVO(x, tmp)
	build.PSLLL(operand.U8(n), x)
	build.PSRLL(operand.U8(32-n), tmp)
	build.POR(tmp, x)
}

// Shuffle emits dst = the 32-bit lanes of src permuted within each 128-bit
// lane by imm (PSHUFD), e.g. to rotate a row of a block between the column
// and diagonal rounds in the row ("horizontal") layout. Use [RotateLanes]
// for the usual rotations.
func (i ISA) Shuffle(dst, src reg.Register, imm uint8) {
	if i.VEX {
		build.VPSHUFD(operand.U8(imm), src, dst)
		return
	}
	build.PSHUFL(operand.U8(imm), src, dst)
}

// RotateLanes returns the PSHUFD immediate that moves the 32-bit lane k of
// every 128-bit lane to lane (k-n) mod 4, i.e. rotates the row left by n
// words: after Shuffle(x, x, RotateLanes(1)), lane 0 holds what lane 1 held.
func RotateLanes(n int) uint8 {
	var imm uint8
	for k := range 4 {
		imm |= uint8((k+n)&3) << (2 * k)
	}
	return imm
}
