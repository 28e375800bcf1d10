package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// A Salsa20 step is x ^= (y + z) <<< n. Salsa20 rotates by 7, 9, 13 and
// 18, so byte shuffles never apply: AVX-512 rotates with VPROLD, the other
// ISAs with two shifts whose results are XORed into x one after the other.

// xorRotL emits dst ^= x <<< n. x is clobbered (it ends up holding a
// shifted copy) except on AVX-512, where it is rotated in place. Without
// AVX-512 it uses the shift/xor/shift/xor form, which needs no OR and no
// extra register: the two shifted halves have no bits in common, so
// XORing each into dst equals XORing their OR.
func xorRotL(isa arx.ISA, dst, x Register, n int, tmp Register) {
	if n <= 0 || n >= 32 {
		panic(fmt.Sprintf("salsa: rotation by %d", n))
	}
	if isa.EVEX {
		VPROLD(U8(n), x, x)
		VPXORD(x, dst, dst)
		return
	}
	shiftHalves(isa, x, n, tmp)
	isa.Xor(dst, tmp)
	isa.Xor(dst, x)
}

// shiftHalves emits hi = x << n and x = x >> (32-n) in every lane: the two
// halves of x <<< n, which have no bits in common (not for AVX-512, which
// rotates with VPROLD).
func shiftHalves(isa arx.ISA, x Register, n int, hi Register) {
	if isa.VEX {
		VPSLLD(U8(n), x, hi)
		VPSRLD(U8(32-n), x, x)
		return
	}
	MOVO(x, hi)
	PSLLL(U8(n), hi)
	PSRLL(U8(32-n), x)
}

// step emits dst ^= (a + b) <<< n, one Salsa20 step, using t (and u
// without AVX-512) as scratch. a and b are left unchanged.
func step(isa arx.ISA, dst, a, b, t, u Register, n int) {
	isa.Add3(t, a, b)
	xorRotL(isa, dst, t, n, u)
}

// stepLow is [step] for a one-set diagonal kernel on XMM or YMM with
// AVX-512VL, whose one dependency chain sets its speed: dst ^= t <<< n as
// a three-way XOR (VPTERNLOGD) of dst and t's two shifted halves, which
// have no bits in common, so the chain runs through the addition, the
// two shifts side by side and the XOR, 3 cycles, where add, VPROLD and
// xor take 4 on CPUs whose VPROLD has a latency of 2 (AMD Zen 4). t and u
// are scratch.
func stepLow(dst, a, b, t, u Register, n int) {
	VPADDD(b, a, t)
	VPSLLD(U8(n), t, u)
	VPSRLD(U8(32-n), t, t)
	VPTERNLOGD(U8(0x96), u, t, dst)
}

// stepMem is [step] for a register-starved kernel that keeps some state
// words in memory: dst ^= (a + b) <<< n where each of dst, a and b is a
// register or a full-width memory operand (16-byte aligned for SSSE3). t
// and u are scratch registers; a and b are left unchanged. A memory dst is
// loaded, updated and stored back, so it costs a store; a memory a or b
// folds into the addition when the other is a register.
//
// The 8-block AVX2 and 4-block SSSE3 kernels need it (sixteen state words
// and two scratch registers do not fit in sixteen vector registers), and
// the 32-block AVX-512 one (32 state words leave no scratch register).
func stepMem(isa arx.ISA, dst, a, b Op, t, u Register, n int) {
	if _, ok := a.(Mem); ok {
		a, b = b, a
	}
	if ra, ok := a.(Register); ok {
		isa.Add3(t, ra, b)
	} else {
		// Both addends in memory: load one.
		if isa.VEX {
			isa.Load(t, a.(Mem))
		} else {
			MOVO(a, t)
		}
		isa.Add(t, b)
	}
	if rd, ok := dst.(Register); ok {
		xorRotL(isa, rd, t, n, u)
		return
	}
	// dst in memory: rotate into u, then u ^= dst and store it back.
	m := dst.(Mem)
	if isa.EVEX {
		VPROLD(U8(n), t, u)
	} else {
		shiftHalves(isa, t, n, u)
		isa.Xor(u, t)
	}
	if isa.VEX {
		isa.Xor(u, m)
		isa.Store(m, u)
		return
	}
	PXOR(m, u)
	MOVO(u, m)
}
