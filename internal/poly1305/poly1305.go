// Package poly1305 implements the Poly1305 one-time authenticator of
// RFC 8439 section 2.5, with SIMD kernels on amd64.
//
// The API mirrors golang.org/x/crypto/poly1305: [New] returns a [MAC] that
// is written incrementally and then summed or verified, and [Sum] computes
// a tag in one call. A key authenticates exactly one message; using it for
// two lets an attacker forge tags. It is meant for the AEAD constructions
// in pkg/aead, which derive a fresh key per message; [SumAEAD] and
// [MAC.SumAEAD] compute RFC 8439's AEAD tag with the ciphertext, its
// padding and the lengths in one kernel call.
//
// # Implementations
//
// A pure-Go reference (radix 2^64) is always compiled in. On amd64, unless
// built with -tags purego, avo-generated kernels take over: a scalar
// 64-bit kernel for messages under a few hundred bytes (and the AVX2
// kernel's last blocks), an AVX2 kernel (radix 2^26, 4 blocks in parallel)
// and an AVX-512 IFMA kernel (radix 2^44, 52-bit multiply-add, 16 blocks
// in parallel) for longer ones. [Kernel] names the best one this CPU runs;
// [Kernels] and [UseKernel] let tests run every one.
//
// No branch or memory index depends on the key, the message or the tag;
// only lengths steer the code (and, in the IFMA kernel, whether the
// message starts near a page boundary, an address).
package poly1305

import "crypto/subtle"

const (
	// KeySize is the size of a Poly1305 key, r || s, in bytes.
	KeySize = 32
	// TagSize is the size of a Poly1305 tag in bytes.
	TagSize = 16

	blockSize = 16
)

// MAC computes the Poly1305 tag of a message written to it in pieces. Its
// zero value is not usable; create one with [New]. A MAC holds no
// pointers and allocates nothing, so it can live on the caller's stack.
type MAC struct {
	st       state
	buf      [blockSize]byte // a partial block waiting for more input
	n        int             // bytes used in buf
	finished bool            // Sum or Verify was called
}

// New returns a MAC keyed with the one-time key key (r || s; r is clamped
// here as RFC 8439 requires). It is small enough to be inlined, so the MAC
// stays on the caller's stack if it does not escape there.
func New(key *[KeySize]byte) *MAC {
	m := &MAC{}
	m.st.init(key)
	return m
}

// Size returns the length of the tag Sum appends, [TagSize].
func (m *MAC) Size() int { return TagSize }

// Write adds p to the message. It never fails. It panics if called after
// Sum or Verify.
func (m *MAC) Write(p []byte) (int, error) {
	if m.finished {
		panic("poly1305: write to MAC after Sum or Verify")
	}
	n := len(p)
	if m.n > 0 {
		k := copy(m.buf[m.n:], p)
		m.n += k
		p = p[k:]
		if m.n < blockSize {
			return n, nil
		}
		updateBlocks(&m.st, m.buf[:])
		m.n = 0
	}
	if full := len(p) &^ (blockSize - 1); full > 0 {
		updateBlocks(&m.st, p[:full])
		p = p[full:]
	}
	if len(p) > 0 {
		m.n = copy(m.buf[:], p)
	}
	return n, nil
}

// Sum appends the tag of the message written so far to b and returns the
// result. It can be called more than once; afterwards Write panics.
func (m *MAC) Sum(b []byte) []byte {
	var tag [TagSize]byte
	m.sum(&tag)
	return append(b, tag[:]...)
}

// Verify reports whether expected is the tag of the message written so
// far, in time that depends only on len(expected). Afterwards Write panics.
func (m *MAC) Verify(expected []byte) bool {
	var tag [TagSize]byte
	m.sum(&tag)
	return subtle.ConstantTimeCompare(tag[:], expected) == 1
}

// sum writes the tag to out without changing the running state, so Sum can
// be repeated.
func (m *MAC) sum(out *[TagSize]byte) {
	m.finished = true
	st := m.st
	if m.n > 0 {
		var last [blockSize]byte
		copy(last[:], m.buf[:m.n])
		last[m.n] = 1 // the padding bit replaces the 2^128 bit of full blocks
		st.block(&last, 0)
	}
	st.finish(out)
}

// Sum writes to out the tag of m under the one-time key key.
func Sum(out *[TagSize]byte, m []byte, key *[KeySize]byte) {
	var st state
	st.init(key)
	full := len(m) &^ (blockSize - 1)
	if full > 0 {
		updateBlocks(&st, m[:full])
	}
	if rest := m[full:]; len(rest) > 0 {
		var last [blockSize]byte
		copy(last[:], rest)
		last[len(rest)] = 1
		st.block(&last, 0)
	}
	st.finish(out)
}

// Verify reports whether tag is the tag of m under the one-time key key,
// in time that depends only on the lengths.
func Verify(tag *[TagSize]byte, m []byte, key *[KeySize]byte) bool {
	var got [TagSize]byte
	Sum(&got, m, key)
	return subtle.ConstantTimeCompare(tag[:], got[:]) == 1
}
