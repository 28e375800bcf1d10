package poly1305

import "encoding/binary"

// SumAEAD writes to out the tag of RFC 8439's AEAD construction (section
// 2.8) under the one-time key key: the Poly1305 tag of ad, zeros up to a
// multiple of 16 bytes, ct, zeros up to a multiple of 16 bytes, and the
// lengths of ad and ct as 64-bit little-endian numbers. The ciphertext,
// its padded last block and the lengths take one kernel call, where a MAC
// written piece by piece costs a call (and its bookkeeping) per piece.
func SumAEAD(out *[TagSize]byte, key *[KeySize]byte, ad, ct []byte) {
	var st state
	st.init(key)
	st.padded(ad)
	st.end(ct, len(ad), len(ct))
	st.finish(out)
}

// SumAEAD writes to out the RFC 8439 AEAD tag (see the function SumAEAD)
// of a message whose additional data, padded, and a whole number of blocks
// of ciphertext were written to m: ct is the rest of the ciphertext, adLen
// and ctLen the whole lengths. It panics if what was written is not a whole
// number of blocks, or after Sum or Verify; afterwards Write panics.
func (m *MAC) SumAEAD(out *[TagSize]byte, ct []byte, adLen, ctLen int) {
	if m.finished || m.n != 0 {
		panic("poly1305: SumAEAD after Sum or Verify, or off a block boundary")
	}
	m.finished = true
	m.st.end(ct, adLen, ctLen)
	m.st.finish(out)
}

// padded absorbs b and zeros up to a multiple of 16 bytes.
func (st *state) padded(b []byte) {
	full := len(b) &^ (blockSize - 1)
	if full > 0 {
		updateBlocks(st, b[:full])
	}
	if len(b) > full {
		var last [blockSize]byte
		copy(last[:], b[full:])
		st.block(&last, 1)
	}
}

// end absorbs ct, zeros up to a multiple of 16 bytes and the length block,
// with the padded last block and the length block as the kernel's tail.
func (st *state) end(ct []byte, adLen, ctLen int) {
	full := len(ct) &^ (blockSize - 1)
	var tail [2 * blockSize]byte
	n := copy(tail[:], ct[full:])
	n = (n + blockSize - 1) &^ (blockSize - 1)
	binary.LittleEndian.PutUint64(tail[n:], uint64(adLen))
	binary.LittleEndian.PutUint64(tail[n+8:], uint64(ctLen))
	updateBlocksTail(st, ct[:full], tail[:n+blockSize])
}
