package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// cipher is the block function a kernel runs.
type cipher int

const (
	chacha cipher = iota
	salsa
)

// layout is a kernel's plan: its vector groups (block 0 in the first, or
// in general registers with scalar) and how many message blocks the key
// stream covers.
type layout struct {
	cipher cipher
	sets   []setPlan
	scalar bool // ChaCha block 0 in general registers
	max    int  // the longest message, in bytes
}

type setPlan struct {
	isa    arx.ISA
	first  int
	lowLat bool
}

// The AEAD signature: the state with the counter at 0 (block 0, the
// Poly1305 key), the round count, the output (as long as src), the input,
// the additional data and the tag (written by seal, checked by open, which
// reports whether it was valid and writes nothing to dst if not).
const (
	aeadSignature      = "func(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte)"
	secretboxSignature = "func(s *[16]uint32, rounds int, dst, src []byte, tag *[16]byte)"
)

// kernel emits a seal or an open.
func kernel(name string, l layout, open bool) {
	sig := aeadSignature
	if l.cipher == salsa {
		sig = secretboxSignature
	}
	if open {
		sig += " bool"
	}
	TEXT(name, 0, sig)
	Pragma("noescape")
	what := map[cipher]string{chacha: "ChaCha-Poly1305 (RFC 8439)", salsa: "XSalsa20-Poly1305 (NaCl secretbox)"}[l.cipher]
	if open {
		Doc(fmt.Sprintf("%s opens %s messages of at most %d bytes: it reports", name, what, l.max),
			"whether tag is theirs and, only if it is, writes the plaintext to dst.")
	} else {
		Doc(fmt.Sprintf("%s seals %s messages of at most %d bytes.", name, what, l.max))
	}

	sp := Mem{Base: Load(Param("s"), GP64())}
	count := AllocLocal(8)
	{
		r := Load(Param("rounds"), GP64())
		SHRQ(U8(1), r)
		MOVQ(r, count)
	}
	// The scalar block first: its copy of s takes vector registers the
	// groups will not have to spare.
	var sc *scalarChaCha
	if l.scalar {
		sc = newScalarChaCha(sp)
	}
	var groups []group
	var masks [3]Op
	if l.cipher == salsa {
		masks = blendMasks()
	}
	for _, p := range l.sets {
		switch l.cipher {
		case chacha:
			groups = append(groups, newChaChaRows(p.isa, sp, p.first, p.lowLat))
		case salsa:
			groups = append(groups, newSalsaDiagonals(p.isa, sp, p.first, p.lowLat, masks))
		}
	}
	if sc != nil {
		sc.load()
	}

	doubleRounds(name, count, groups, sc)

	Comment("The one-time key: block 0's first 32 bytes.")
	for _, g := range groups {
		g.feedForward()
	}
	var k key
	if sc != nil {
		k = newKey(sc.key())
	} else {
		r0, r1, s0, s1, ok := groups[0].key()
		if !ok {
			panic(name + ": no group holds block 0")
		}
		k = newKey(r0, r1, s0, s1)
	}

	// ctbuf holds the ciphertext zero-padded to whole 64-byte pieces and,
	// for the AEAD, the length block after its padding: the Poly1305 input
	// after the additional data. Open keeps the key stream in ksbuf until
	// the tag is checked.
	ctbuf := AllocLocal(roundUp(l.max, 64) + 16)
	var ksbuf Mem
	if open {
		ksbuf = AllocLocal(roundUp(l.max, 64))
	}
	src, dst, n := GP64(), GP64(), GP64()
	Load(Param("src").Base(), src)
	Load(Param("dst").Base(), dst)
	Load(Param("src").Len(), n)
	Comment("Key stream out: XOR and store (seal), or kept (open).")
	var offs []piece
	for _, g := range groups {
		g.pieces(func(pc piece) {
			offs = append(offs, piece{nil, pc.off, pc.width})
			guarded(n, pc.off, func() {
				km := byteMask(n, pc.off)
				t := vecOf(pc.width)
				VMOVDQU8_Z(Mem{Base: src, Disp: pc.off}, km, t)
				if open {
					VMOVDQU64(t, ctbuf.Offset(pc.off))
					VMOVDQU64(pc.v, ksbuf.Offset(pc.off))
					return
				}
				VMOVDQU8_Z(pc.v, km, pc.v)
				VPXORD(t, pc.v, pc.v)
				VMOVDQU8(pc.v, km, Mem{Base: dst, Disp: pc.off})
				VMOVDQU64(pc.v, ctbuf.Offset(pc.off))
			})
		})
	}

	Comment("The tag.")
	a := newAcc()
	ptr := GP64()
	LEAQ(ctbuf, ptr)
	switch l.cipher {
	case chacha:
		adp, adn := GP64(), GP64()
		Load(Param("ad").Base(), adp)
		Load(Param("ad").Len(), adn)
		a.padded(k, adp, adn, name+"_ad")
		// the padded ciphertext and after it the lengths
		nb, t := GP64(), GP64()
		MOVQ(n, nb)
		ADDQ(U8(15), nb)
		SHRQ(U8(4), nb)
		MOVQ(nb, t)
		SHLQ(U8(4), t)
		ADDQ(ptr, t)
		MOVQ(adn, Mem{Base: t})
		MOVQ(n, Mem{Base: t, Disp: 8})
		INCQ(nb)
		a.blocks(k, ptr, nb, name+"_ct")
	case salsa:
		// the ciphertext, its last partial block padded with a 1 byte
		nb, rest := GP64(), GP64()
		MOVQ(n, nb)
		SHRQ(U8(4), nb)
		MOVQ(n, rest)
		ANDQ(U8(15), rest)
		a.blocks(k, ptr, nb, name+"_ct")
		a.last(k, ptr, rest, name+"_last")
	}
	tagged(name, a, k, open, offs, func(pc piece) VecVirtual {
		v := vecOf(pc.width)
		VMOVDQU64(ksbuf.Offset(pc.off), v)
		VPXORD(ctbuf.Offset(pc.off), v, v)
		return v
	}, func() {
		zero := ZMM()
		VPXORD(zero, zero, zero)
		for off := 0; off < roundUp(l.max, 64); off += 64 {
			VMOVDQU64(zero, ksbuf.Offset(off))
		}
	})
}

// tagged finishes a kernel from its accumulator a: seal writes the tag;
// open compares it with tag in constant time and, only if it is valid,
// writes the plaintext of each piece of offs that lies (in part) within
// the message, which plain computes (from the key stream it kept and the
// ciphertext), or else runs clear, which must clear the key stream it
// kept (with the known ciphertext it would be the plaintext).
func tagged(name string, a acc, k key, open bool, offs []piece, plain func(piece) VecVirtual, clear func()) {
	t0, t1 := a.tag(k)
	tp := Mem{Base: Load(Param("tag"), GP64())}
	if !open {
		MOVQ(t0, tp)
		MOVQ(t1, tp.Offset(8))
		VZEROUPPER()
		RET()
		return
	}
	Comment("Compare in constant time; only a valid tag lets plaintext out.")
	XORQ(tp, t0)
	XORQ(tp.Offset(8), t1)
	ORQ(t0, t1)
	ok := GP8()
	SETEQ(ok)
	Store(ok, ReturnIndex(0))
	TESTQ(t1, t1)
	JNZ(LabelRef(name + "_bad"))
	n, dst := GP64(), GP64()
	Load(Param("src").Len(), n)
	Load(Param("dst").Base(), dst)
	for _, pc := range offs {
		guarded(n, pc.off, func() {
			km := byteMask(n, pc.off)
			VMOVDQU8(plain(pc), km, Mem{Base: dst, Disp: pc.off})
		})
	}
	JMP(LabelRef(name + "_done"))
	Label(name + "_bad")
	clear()
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// doubleRounds emits the rounds loop: count (a frame word, rounds/2)
// double rounds of the vector groups, with the scalar block's (if any)
// beside them.
func doubleRounds(name string, count Mem, groups []group, sc *scalarChaCha) {
	Comment("The double rounds, the scalar block's beside the vector groups'.")
	Label(name + "_rounds")
	for _, diag := range []bool{false, true} {
		var vec, realign []func()
		for _, g := range groups {
			round, re := g.half(diag)
			vec = append(vec, round...)
			realign = append(realign, re...)
		}
		var sca []func()
		if sc != nil {
			q := columns
			if diag {
				q = diagonals
			}
			sca = sc.half(q)
		}
		interleave(vec, sca)
		for _, f := range realign {
			f()
		}
	}
	DECQ(count)
	JNZ(LabelRef(name + "_rounds"))
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }
