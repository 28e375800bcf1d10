package arx

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// AddRotXorMem is [ISA.AddRotXor] for a register-starved kernel that keeps
// some state words in memory: dst ^= (a + b) <<< n where each of dst, a and
// b is a register or a full-width memory operand (16-byte aligned for
// SSSE3). t and u are scratch registers; a and b are left unchanged. A
// memory dst is loaded, updated and stored back, so it costs a store; a
// memory a or b folds into the addition when the other is a register.
//
// Salsa20's 8-block AVX2 and 4-block SSSE3 kernels need it: sixteen state
// words and two scratch registers do not fit in sixteen vector registers.
func (i ISA) AddRotXorMem(dst, a, b operand.Op, t, u reg.Register, n int) {
	if _, ok := a.(operand.Mem); ok {
		a, b = b, a
	}
	if ra, ok := a.(reg.Register); ok {
		i.Add3(t, ra, b)
	} else {
		// Both addends in memory: load one.
		if i.VEX {
			i.Load(t, a.(operand.Mem))
		} else {
			build.MOVO(a, t)
		}
		i.Add(t, b)
	}
	if rd, ok := dst.(reg.Register); ok {
		i.XorRotL(rd, t, n, u)
		return
	}
	// dst in memory: rotate into u, then u ^= dst and store it back.
	m := dst.(operand.Mem)
	if i.EVEX {
		build.VPROLD(operand.U8(n), t, u)
	} else if i.VEX {
		build.VPSLLD(operand.U8(n), t, u)
		build.VPSRLD(operand.U8(32-n), t, t)
		build.VPXOR(t, u, u)
	} else {
		build.MOVO(t, u)
		build.PSLLL(operand.U8(n), u)
		build.PSRLL(operand.U8(32-n), t)
		build.PXOR(t, u)
	}
	if i.VEX {
		i.Xor(u, m)
		i.Store(m, u)
		return
	}
	build.PXOR(m, u)
	build.MOVO(u, m)
}
