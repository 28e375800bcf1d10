package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// Message lengths of the 16-block kernels: the longest, and the shortest
// the lanes' Poly1305 takes (one full group of 16 blocks before the last:
// the ciphertext's blocks and the length block make at least 17).
const (
	max16 = 1024
	min16 = 241
)

// kernel16 emits a seal or an open of ChaCha-Poly1305 messages of min16 to
// max16 bytes: message blocks 1-16 in a vertical ZMM group, block 0 in
// general registers ahead of its rounds (skewedRounds), and Poly1305 in
// vector lanes (AVX-512 IFMA) over a frame copy of the MAC input after the
// additional data (the ciphertext, zero-padded, then the lengths). Once
// block 0 is done, the general registers compute most of the powers of r
// (scalarPowers) and take the additional data beside the group's last
// double rounds; one vector multiplication after them completes the
// powers (fillRest).
func kernel16(name string, open bool) {
	sig := aeadSignature
	if open {
		sig += " bool"
	}
	TEXT(name, 0, sig)
	Pragma("noescape")
	if open {
		Doc(fmt.Sprintf("%s opens ChaCha-Poly1305 (RFC 8439) messages of %d to %d bytes: it reports", name, min16, max16),
			"whether tag is theirs and, only if it is, writes the plaintext to dst.")
	} else {
		Doc(fmt.Sprintf("%s seals ChaCha-Poly1305 (RFC 8439) messages of %d to %d bytes.", name, min16, max16))
	}

	// The MAC input after the additional data: the ciphertext, zero-padded
	// to whole 16-byte blocks, then the length block, in groups of 256
	// bytes; the last group may reach 256 bytes past the ciphertext's
	// max16. Open keeps the key stream's words (the group's registers,
	// untransposed) until the lanes are done.
	var lay layout64
	ctOff := lay.take(max16 + 256)
	ksOff := -1
	if open {
		ksOff = lay.take(max16)
	}
	t := newPowerTable(&lay)
	f := newFrame64(lay.next)
	count := AllocLocal(8)
	pre := AllocLocal(24)

	{
		b := f.base()
		if open {
			ciphertextToFrame(b, ctOff, max16)
		}
		t.zeroTail(b)
	}

	sp := Mem{Base: Load(Param("s"), GP64())}
	sc := newScalarChaCha(sp)
	g := newChaChaVertical(sp, 1)
	l := newLanes(t)
	{
		r := Load(Param("rounds"), GP64())
		SHRQ(U8(1), r)
		MOVQ(r, count)
	}
	var k key
	skewedRounds(name, count, g, sc, func() [][]func() {
		k = newKey(sc.key())
		chunks := t.scalarPowers(f, k)
		// the additional data beside the first double round after (it
		// has a loop, so it must not go to a round only some counts have)
		chunks[0] = append(chunks[0], func() { additionalData(k, name, pre) })
		return chunks
	})

	Comment("Key stream out (seal: XORed, to dst and the frame; open: its words kept).")
	g.feedForward()
	{
		b := f.base()
		if open {
			// as the group holds them, one word of the 16 blocks a
			// register: the transposes wait for after the lanes, where
			// they run beside the tag's chain in general registers
			for i, x := range g.x {
				VMOVDQU64(x, b.Offset(ksOff+64*i))
			}
		} else {
			g.pieces(func(pc piece) { keyStreamPiece(b, pc, false, ksOff, ctOff) })
		}
		Comment("The length block after the zero-padded ciphertext.")
		at, v := GP64(), GP64()
		Load(Param("src").Len(), at)
		ADDQ(U8(15), at)
		ANDQ(I8(-16), at)
		ADDQ(b.Base, at)
		Load(Param("ad").Len(), v)
		MOVQ(v, Mem{Base: at, Disp: ctOff})
		Load(Param("src").Len(), v)
		MOVQ(v, Mem{Base: at, Disp: ctOff + 8})
	}

	Comment("Poly1305 over the ciphertext and the lengths, in vector lanes.")
	t.fillRest(f, l.k)
	full, kLast, n := GP64(), GP64(), GP64()
	{
		// blocks k = (n+15)/16 + 1; full = (k-1)/16; kLast = k - 16·full
		Load(Param("src").Len(), kLast)
		ADDQ(U8(15), kLast)
		SHRQ(U8(4), kLast)
		MOVQ(kLast, full)
		SHRQ(U8(4), full)
		INCQ(kLast)
		MOVQ(full, n)
		SHLQ(U8(4), n)
		SUBQ(n, kLast)
	}
	h0, h1, h2 := l.macLanes(name, f, ctOff, pre, full, kLast, 4)
	var offs []piece
	for off := 0; off < max16; off += 64 {
		offs = append(offs, piece{nil, off, 64})
	}
	var plain []VecVirtual
	if open {
		Comment("The plaintext, in registers until the tag is checked.")
		b := f.base()
		for i, x := range g.x {
			VMOVDQU64(b.Offset(ksOff+64*i), x)
		}
		g.pieces(func(pc piece) {
			v := pc.v.(VecVirtual)
			VPXORD(b.Offset(ctOff+pc.off), v, v)
			plain = append(plain, v)
		})
	}
	tagged(name, acc{h0, h1, h2}, k, open, offs, func(pc piece) VecVirtual {
		return plain[pc.off/64]
	}, func() {
		b := f.base()
		for _, v := range plain {
			VPXORD(v, v, v)
		}
		for off := 0; off < max16; off += 64 {
			VMOVDQU64(plain[0], b.Offset(ksOff+off))
		}
	})
}
