package arx

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Load emits dst = the vector at m (unaligned).
func (i ISA) Load(dst reg.Register, m operand.Mem) {
	switch {
	case i.EVEX:
		build.VMOVDQU32(m, dst)
	case i.VEX:
		build.VMOVDQU(m, dst)
	default:
		build.MOVOU(m, dst)
	}
}

// Store emits m = src (unaligned).
func (i ISA) Store(m operand.Mem, src reg.Register) {
	switch {
	case i.EVEX:
		build.VMOVDQU32(src, m)
	case i.VEX:
		build.VMOVDQU(src, m)
	default:
		build.MOVOU(src, m)
	}
}

// XorLoad emits v ^= the vector at m (unaligned). For SSSE3, whose PXOR
// needs an aligned memory operand, tmp receives the loaded vector first; the
// other ISAs fold the load and ignore tmp.
func (i ISA) XorLoad(v reg.Register, m operand.Mem, tmp reg.Register) {
	if !i.VEX {
		build.MOVOU(m, tmp)
		build.PXOR(tmp, v)
		return
	}
	i.Xor(v, m)
}

// XorStore emits dst = src XOR v for one vector: the key stream in v
// encrypts the input at src into the output at dst. v is clobbered; tmp is
// used only by SSSE3 (see [ISA.XorLoad]). src and dst may be equal.
func (i ISA) XorStore(dst, src operand.Mem, v, tmp reg.Register) {
	i.XorLoad(v, src, tmp)
	i.Store(dst, v)
}

// Broadcast emits dst = the 32-bit word at m in every lane. SSSE3 does it
// with MOVL/MOVD and PSHUFD; tmp (a 32-bit general register) is used only
// there.
func (i ISA) Broadcast(dst reg.Register, m operand.Mem, tmp reg.GPVirtual) {
	if i.VEX {
		build.VPBROADCASTD(m, dst)
		return
	}
	build.MOVL(m, tmp)
	build.MOVD(tmp, dst)
	build.PSHUFL(operand.U8(0), dst, dst)
}

// BroadcastRow emits dst = the 16 bytes at m repeated in every 128-bit lane
// (the row layout of several blocks at once). For XMM it is a plain load.
func (i ISA) BroadcastRow(dst reg.Register, m operand.Mem) {
	switch i.Bytes {
	case 16:
		i.Load(dst, m)
	case 32:
		build.VBROADCASTI128(m, dst)
	default:
		build.VBROADCASTI32X4(m, dst)
	}
}
