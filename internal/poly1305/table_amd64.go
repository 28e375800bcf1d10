//go:build gc && !purego

package poly1305

// table holds powers of r laid out for one vector kernel. Building it costs
// a few dozen multiplications, so a MAC builds it once, on the first long
// write, and the kind records for which kernel (tests switch kernels).
type table struct {
	kind tableKind
	v    [tableWords]uint64
}

type tableKind uint8

const (
	tableNone tableKind = iota
	tableAVX2
	tableIFMA
)

// The IFMA kernel runs ifmaAccs accumulators of 8 lanes each, so one loop
// iteration absorbs ifmaLanes blocks. Its table (qwords):
//
//	[0:5]                   r^ifmaLanes as 44-bit limbs l0, l1, l2, 20·l1, 20·l2
//	[8+40a+8i : +8]         for accumulator a, limb i of the same five: the
//	                        power each lane multiplies by at the end
//
// The kernel loads 4 blocks per ZMM and interleaves two ZMMs' quadwords
// (VPUNPCKLQDQ/VPUNPCKHQDQ), so lane q of accumulator a holds block
// 8a + q/2 (q even) or 8a + 4 + q/2 (q odd) of each group, and must end
// multiplied by r^(ifmaLanes - block).
const (
	ifmaAccs   = 2
	ifmaLanes  = 8 * ifmaAccs
	ifmaStride = ifmaLanes * blockSize // bytes per loop iteration
	tableWords = 8 + 40*ifmaAccs
)

// The AVX2 kernel absorbs 4 blocks per iteration in radix 2^26. Its table
// holds YMM-wide vectors (4 qwords each) of 26-bit limbs r0..r4 and
// 5·r1..5·r4: [0:36] r^4 in every lane, [36:72] the final powers per lane.
// Its loads interleave like the IFMA ones: lanes hold blocks 0, 2, 1, 3.
const (
	avx2Lanes  = 4
	avx2Stride = avx2Lanes * blockSize
)

// powers returns r^1 .. r^n fully reduced, index k holding r^k.
func powers(r [2]uint64, n int) [ifmaLanes + 1][3]uint64 {
	var pw [ifmaLanes + 1][3]uint64
	x := [3]uint64{r[0], r[1], 0}
	for k := 1; k <= n; k++ {
		pw[k] = reduce(x)
		x = mulMod(x, r)
	}
	return pw
}

// limbs44 splits x < 2^130 into 44-bit limbs.
func limbs44(x [3]uint64) [3]uint64 {
	const m = 1<<44 - 1
	return [3]uint64{x[0] & m, (x[0]>>44 | x[1]<<20) & m, x[1]>>24 | x[2]<<40}
}

// limbs26 splits x < 2^130 into 26-bit limbs.
func limbs26(x [3]uint64) [5]uint64 {
	const m = 1<<26 - 1
	return [5]uint64{
		x[0] & m, x[0] >> 26 & m, (x[0]>>52 | x[1]<<12) & m,
		x[1] >> 14 & m, x[1]>>40 | x[2]<<24,
	}
}

// ifma5 is a power as the IFMA kernel multiplies by it: limbs and the
// multiples of 20 that fold the products above 2^130 (2^132 = 20 mod p).
func ifma5(x [3]uint64) [5]uint64 {
	l := limbs44(x)
	return [5]uint64{l[0], l[1], l[2], 20 * l[1], 20 * l[2]}
}

// avx9 is a power as the AVX2 kernel multiplies by it: limbs and the
// multiples of 5 that fold the products above 2^130.
func avx9(x [3]uint64) [9]uint64 {
	l := limbs26(x)
	return [9]uint64{l[0], l[1], l[2], l[3], l[4], 5 * l[1], 5 * l[2], 5 * l[3], 5 * l[4]}
}

func (t *table) buildIFMA(r [2]uint64) {
	pw := powers(r, ifmaLanes)
	main := ifma5(pw[ifmaLanes])
	copy(t.v[0:5], main[:])
	for a := range ifmaAccs {
		for q := range 8 {
			block := 8*a + q/2
			if q%2 == 1 {
				block += 4
			}
			p := ifma5(pw[ifmaLanes-block])
			for i := range p {
				t.v[8+40*a+8*i+q] = p[i]
			}
		}
	}
	t.kind = tableIFMA
}

func (t *table) buildAVX2(r [2]uint64) {
	pw := powers(r, avx2Lanes)
	main := avx9(pw[avx2Lanes])
	for i, l := range main {
		for q := range avx2Lanes {
			t.v[4*i+q] = l
		}
	}
	for q, block := range [avx2Lanes]int{0, 2, 1, 3} {
		p := avx9(pw[avx2Lanes-block])
		for i := range p {
			t.v[36+4*i+q] = p[i]
		}
	}
	t.kind = tableAVX2
}
