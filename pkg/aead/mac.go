package aead

import (
	"encoding/binary"

	"github.com/spipe-dev/spipe/internal/poly1305"
)

// polyMAC is the running Poly1305 authenticator of one message, on the
// fastest kernel this CPU runs (internal/poly1305).
type polyMAC = poly1305.MAC

// newMAC returns Poly1305 keyed with a one-time key. It is inlined, so the
// MAC lives on the caller's stack.
func newMAC(key *[32]byte) *polyMAC { return poly1305.New(key) }

// sumMAC writes the Poly1305 tag of msg under the one-time key to tag, in
// one call: no MAC value, no buffering.
func sumMAC(tag *[TagSize]byte, msg []byte, key *[32]byte) { poly1305.Sum(tag, msg, key) }

// sumAEAD writes to tag the RFC 8439 tag of additional data ad and
// ciphertext ct under the one-time key: a short MAC input gathered on the
// stack in one scalar call, a longer one with ct and its end (padded last
// block, lengths) in one kernel call; either way no MAC value.
func sumAEAD(tag *[TagSize]byte, key *[32]byte, ad, ct []byte) {
	if roundUp16(len(ad))+roundUp16(len(ct))+16 <= shortMACSize {
		sumShort(tag, key, ad, ct)
		return
	}
	sumAEADLong(tag, key, ad, ct)
}

// sumAEADLong is sumAEAD for MAC inputs over shortMACSize.
func sumAEADLong(tag *[TagSize]byte, key *[32]byte, ad, ct []byte) {
	poly1305.SumAEAD(tag, key, ad, ct)
}

// tagsEqual reports whether two tags are equal in time independent of
// their contents: it ORs the XORs of their two words and tests the result
// once, with no early exit. It does for 16 bytes what
// subtle.ConstantTimeCompare does for any length, which loops over bytes
// (about 2% of a 1 KiB Open).
func tagsEqual(a, b *[TagSize]byte) bool {
	x := binary.LittleEndian.Uint64(a[:8]) ^ binary.LittleEndian.Uint64(b[:8])
	y := binary.LittleEndian.Uint64(a[8:]) ^ binary.LittleEndian.Uint64(b[8:])
	return x|y == 0
}
