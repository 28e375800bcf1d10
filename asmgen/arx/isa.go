package arx

import (
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/reg"
)

// ISA is an instruction set and vector width: what the helpers of this
// package emit for a given kernel.
type ISA struct {
	// Name is a short lower-case label ("ssse3", "avx2", "avx512", ...),
	// handy for function names in generated code.
	Name string
	// Bytes is the vector width in bytes: 16 (XMM), 32 (YMM) or 64 (ZMM).
	Bytes int
	// EVEX is true for AVX-512 encodings: VPROLD rotations, broadcast memory
	// operands, 32 vector registers.
	EVEX bool
	// VEX is true for three-operand forms (AVX2, and every EVEX ISA).
	VEX bool
}

// The instruction sets the kernels target.
var (
	// SSSE3 is legacy-encoded SSE on XMM: two-operand destructive forms,
	// PSHUFB for byte-multiple rotations, 16 registers. Memory operands of
	// arithmetic instructions must be 16-byte aligned, so the helpers load
	// unaligned data with MOVOU first.
	SSSE3 = ISA{Name: "ssse3", Bytes: 16}
	// AVX2 is VEX-encoded on YMM: three-operand forms, VPSHUFB within each
	// 128-bit lane, 16 registers (Y16-Y31 would need AVX-512VL).
	AVX2 = ISA{Name: "avx2", Bytes: 32, VEX: true}
	// AVX512 is EVEX-encoded on ZMM: VPROLD for every rotation, 32
	// registers, broadcast memory operands.
	AVX512 = ISA{Name: "avx512", Bytes: 64, VEX: true, EVEX: true}
	// AVX512VL128 is AVX-512VL on XMM: VPROLD on 128-bit vectors.
	AVX512VL128 = ISA{Name: "avx512vl128", Bytes: 16, VEX: true, EVEX: true}
	// AVX512VL256 is AVX-512VL on YMM: VPROLD on 256-bit vectors.
	AVX512VL256 = ISA{Name: "avx512vl256", Bytes: 32, VEX: true, EVEX: true}
)

// Lanes is the number of 32-bit lanes in one vector.
func (i ISA) Lanes() int { return i.Bytes / 4 }

// Vec returns a new virtual vector register of the ISA's width.
func (i ISA) Vec() reg.VecVirtual {
	switch i.Bytes {
	case 16:
		return build.XMM()
	case 32:
		return build.YMM()
	case 64:
		return build.ZMM()
	}
	panic("arx: bad vector width")
}

// Vecs returns n new virtual vector registers.
func (i ISA) Vecs(n int) []reg.Register {
	v := make([]reg.Register, n)
	for k := range v {
		v[k] = i.Vec()
	}
	return v
}

// VZeroUpper emits VZEROUPPER for VEX and EVEX code, which avo does not do by
// itself; call it before every RET of such a function so that later SSE code
// in the caller does not pay the AVX-SSE transition penalty.
func (i ISA) VZeroUpper() {
	if i.VEX {
		build.VZEROUPPER()
	}
}
