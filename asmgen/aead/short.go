package main

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
	"github.com/spipe-dev/spipe/asmgen/ifma"
)

// kernelShort emits a seal or an open of ChaCha-Poly1305 messages of 1 to
// 256·sets bytes: message blocks 1-4 (and 5-8) in one (or two) ZMM row
// sets and block 0 in general registers beside them, as
// chachaPolyAVX512x4 has them, but Poly1305 over the ciphertext in vector
// lanes (AVX-512 IFMA) instead of one block after the other in general
// registers: the lanes take 16 blocks at once where general registers
// take 16 cycles a block, but their chain after the rounds (the powers of
// r, the products, the sums) costs the same at any length, so the kernels
// pay off from about 200 bytes (docs/KERNELS.md). The
// length block, known from the start, follows the lanes' sum in general
// registers: h = (Σ c_i·r^(k-i) + pre·r^k + L)·r for the k ciphertext
// blocks c_i, pre the additional data's accumulator and L the lengths.
// An empty message would need pre alone (r^0, not in the power table):
// the kernel takes at least one byte.
func kernelShort(name string, sets int, open bool) {
	maxLen := 256 * sets
	sig := aeadSignature
	if open {
		sig += " bool"
	}
	TEXT(name, 0, sig)
	Pragma("noescape")
	if open {
		Doc(fmt.Sprintf("%s opens ChaCha-Poly1305 (RFC 8439) messages of 1 to %d bytes: it reports", name, maxLen),
			"whether tag is theirs and, only if it is, writes the plaintext to dst.")
	} else {
		Doc(fmt.Sprintf("%s seals ChaCha-Poly1305 (RFC 8439) messages of 1 to %d bytes.", name, maxLen))
	}

	// The ciphertext, zero-padded to whole 16-byte blocks (what lies past
	// its last block meets a zero power); open keeps the key stream until
	// the tag is checked.
	var lay layout64
	ctOff := lay.take(maxLen)
	ksOff := -1
	if open {
		ksOff = lay.take(maxLen)
	}
	t := newPowerTable(&lay)
	f := newFrame64(lay.next)
	count := AllocLocal(8)
	pre := AllocLocal(24)
	lens := AllocLocal(16)

	{
		b := f.base()
		if open {
			ciphertextToFrame(b, ctOff, maxLen)
		}
		t.zeroTail(b)
		Comment("The length block.")
		v := GP64()
		Load(Param("ad").Len(), v)
		MOVQ(v, lens)
		Load(Param("src").Len(), v)
		MOVQ(v, lens.Offset(8))
	}

	sp := Mem{Base: Load(Param("s"), GP64())}
	sc := newScalarChaCha(sp)
	var groups []group
	for i := range sets {
		groups = append(groups, newChaChaRows(arx.AVX512, sp, 1+4*i, false))
	}
	{
		r := Load(Param("rounds"), GP64())
		SHRQ(U8(1), r)
		MOVQ(r, count)
	}
	sc.load()
	doubleRounds(name, count, groups, sc)
	k := newKey(sc.key())

	Comment("Key stream out (seal: XORed, to dst and the frame; open: kept).")
	var offs []piece
	for _, g := range groups {
		g.feedForward()
		b := f.base()
		g.pieces(func(pc piece) {
			offs = append(offs, piece{nil, pc.off, pc.width})
			keyStreamPiece(b, pc, open, ksOff, ctOff)
		})
	}

	Comment("The powers of r.")
	c := ifma.NewConsts()
	t.fill(f, k, c)

	additionalData(k, name, pre)

	Comment("Poly1305 over the ciphertext in lanes, then the lengths.")
	l := &lanes{k: c, hibit: ifma.Const(1 << 40), t: t}
	a := acc{GP64(), GP64(), GP64()}
	{
		// k = (n+15)/16 blocks
		nb := GP64()
		Load(Param("src").Len(), nb)
		ADDQ(U8(15), nb)
		SHRQ(U8(4), nb)
		if sets > 1 {
			CMPQ(nb, U8(16))
			JA(LabelRef(name + "_two"))
		}
		h := oneGroup(l, f, ctOff, pre, nb)
		MOVQ(h[0], a.h0)
		MOVQ(h[1], a.h1)
		MOVQ(h[2], a.h2)
		if sets > 1 {
			JMP(LabelRef(name + "_mac"))
			Label(name + "_two")
			l.order = ZMM()
			VMOVDQU64(laneOrder(), l.order)
			full := GP64()
			MOVQ(U32(1), full)
			SUBQ(U8(16), nb)
			h0, h1, h2 := l.macLanes(name, f, ctOff, pre, full, nb, 1)
			MOVQ(h0, a.h0)
			MOVQ(h1, a.h1)
			MOVQ(h2, a.h2)
			Label(name + "_mac")
		}
		a.absorb(k, lens)
	}

	var b Mem
	if open {
		b = f.base()
	}
	tagged(name, a, k, open, offs, func(pc piece) VecVirtual {
		v := ZMM()
		VMOVDQU64(b.Offset(ksOff+pc.off), v)
		VPXORD(b.Offset(ctOff+pc.off), v, v)
		return v
	}, func() {
		b := f.base()
		zero := ZMM()
		VPXORD(zero, zero, zero)
		for off := 0; off < maxLen; off += 64 {
			VMOVDQU64(zero, b.Offset(ksOff+off))
		}
	})
}

// oneGroup returns h = Σ c_i·r^(k-i) + pre·r^k (radix 2^64, h2 <= 4) for
// the k blocks (1 to 16, in a register) at ctOff in f, the power table
// filled: one group of lanes, the powers from entry 16 - k on.
func oneGroup(l *lanes, f *frame64, ctOff int, pre Mem, k GPVirtual) [3]GPVirtual {
	b := f.base()
	grp := l.group(b.Offset(ctOff))
	for i := range 3 {
		x := XMM()
		VMOVQ(pre.Offset(8*i), x)
		VPADDQ(x.AsZ(), grp[0][i], grp[0][i])
	}
	e := GP64()
	MOVQ(U32(16), e)
	SUBQ(k, e)
	var cols [3]VecVirtual
	for p, m := range shortPowers(l.t, b, e) {
		lo := [3]VecVirtual{ZMM(), ZMM(), ZMM()}
		hi := [3]VecVirtual{ZMM(), ZMM(), ZMM()}
		ifma.Products(grp[p], lo, hi, m, l.k, false)
		if p == 0 {
			cols = lo
			continue
		}
		for i := range 3 {
			VPADDQ(lo[i], cols[i], cols[i])
		}
	}
	sum := ifma.HSum(cols, [3]VecVirtual{ZMM(), ZMM(), ZMM()})
	h0, h1, h2 := ifma.PackH44(sum[0], sum[1], sum[2])
	return [3]GPVirtual{h0, h1, h2}
}

var shortIndexTable *Mem

// shortIndex is the table of shortPowers: the entries of a power table
// that pair 0 and pair 1 of a group take from entry 0 on, in lane order,
// then 16, the first entry past the powers.
func shortIndex() Mem {
	if shortIndexTable == nil {
		m := GLOBL("shortindex", attr.RODATA|attr.NOPTR)
		for p := range 2 {
			for q, blk := range laneBlock {
				DATA(8*(8*p+q), U64(uint64(8*p+blk)))
			}
		}
		DATA(8*16, U64(16))
		shortIndexTable = &m
	}
	return *shortIndexTable
}

// shortPowers returns the multipliers of a group's two pairs from entry e
// (a register, 0 to 15) of the filled power table t on, in lane order, as
// lanes.powers does for a constant entry, but permuted in registers from
// the two aligned vectors fill stored per array: a load at a run-time
// entry would straddle them, and a load that spans two stores waits for
// both to reach the cache instead of taking their data forwarded (Zen 4:
// the 192-byte kernel measured slower than the 256-byte one, whose entry
// is 0). Entries from 16 on are zero.
func shortPowers(t powerTable, b Mem, e GPVirtual) [2][5]Op {
	tab := shortIndex()
	base := ZMM()
	VPBROADCASTQ(e, base)
	var idx [2]VecVirtual
	var in [2]Op
	for p := range 2 {
		idx[p] = ZMM()
		VPADDQ(tab.Offset(64*p), base, idx[p])
		km := K()
		VPCMPUQ_BCST(U8(1), tab.Offset(128), idx[p], km) // idx < 16
		in[p] = km
	}
	var out [2][5]Op
	for c := range 5 {
		first := ZMM()
		VMOVDQU64(t.at(b, c, 0), first)
		for p := range 2 {
			v := ZMM()
			VMOVDQA64(idx[p], v)
			VPERMI2Q_Z(t.at(b, c, 8), first, in[p], v)
			out[p][c] = v
		}
	}
	return out
}
