package ifma

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// MulScalar returns the limbs of x·y mod p computed in general registers
// with MULX, for the few products a kernel needs outside its vectors (the
// powers of r its lanes multiply by). x's limbs (registers or memory) are
// below 2^45; y comes as the five multipliers y0, y1, y2, 20·y1, 20·y2
// (registers or memory), its limbs below 2^45. The columns
//
//	d0 = x0·y0 + x1·20y2 + x2·20y1
//	d1 = x0·y1 + x1·y0  + x2·20y2
//	d2 = x0·y2 + x1·y1  + x2·y0
//
// are below 2^96 (two words each); one carry step through them and the
// fold of bits 130 and up, times 5, into limb 0, then one more carry from
// limb 0, leave the result's limbs below 2^44, 2^44 + 2^13 and 2^42: the
// same bounds Mul's results keep, good for MulScalar and for the vector
// products alike.
func MulScalar(x [3]Op, y [5]Op) [3]GPVirtual {
	terms := [3][3]Op{
		{y[0], y[1], y[2]}, // x0·(y0, y1, y2) into d0, d1, d2
		{y[4], y[0], y[1]}, // x1·(20y2, y0, y1)
		{y[3], y[4], y[0]}, // x2·(20y1, 20y2, y0)
	}
	var lo, hi [3]GPVirtual
	for i := range 3 {
		MOVQ(x[i], RDX)
		for c := range 3 {
			if i == 0 {
				lo[c], hi[c] = GP64(), GP64()
				MULXQ(terms[i][c], lo[c], hi[c])
				continue
			}
			l, h := GP64(), GP64()
			MULXQ(terms[i][c], l, h)
			ADDQ(l, lo[c])
			ADCQ(h, hi[c])
		}
	}
	mask := GP64()
	MOVQ(U64(1<<44-1), mask)
	var out [3]GPVirtual
	for c := range 3 {
		out[c] = GP64()
		MOVQ(lo[c], out[c])
		if c < 2 {
			ANDQ(mask, out[c])
			SHRQ(U8(44), hi[c], lo[c]) // the carry, below 2^52
			ADDQ(lo[c], lo[c+1])
			ADCQ(U8(0), hi[c+1])
			continue
		}
		SHRQ(U8(2), mask) // 2^42 - 1
		ANDQ(mask, out[2])
		SHRQ(U8(42), hi[2], lo[2]) // bits 130 and up, below 2^54
		LEAQ(Mem{Base: lo[2], Index: lo[2], Scale: 4}, lo[2])
		ADDQ(lo[2], out[0])
		MOVQ(out[0], lo[2])
		SHRQ(U8(44), lo[2])
		SHLQ(U8(2), mask)
		ORQ(U8(3), mask) // 2^44 - 1 again
		ANDQ(mask, out[0])
		ADDQ(lo[2], out[1])
	}
	return out
}
