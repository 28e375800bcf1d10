package spipe

import (
	"encoding/binary"
	"fmt"
)

// Version is the protocol version this package speaks: the first byte of
// every handshake message.
const Version = 1

// Handshake message types (byte 1 of each message).
const (
	msgClientHello    = 1
	msgServerHello    = 2
	msgClientFinished = 3
)

// Hello flags (byte 2).
const flagEphemeral = 1 // an X25519 public key is present

// Sizes of the handshake messages; see docs/PROTOCOL.md for the layout.
const (
	nonceSize   = 32
	pubKeySize  = 32
	macSize     = 32
	helloBody   = 10 + nonceSize + pubKeySize // everything the MAC covers
	helloSize   = helloBody + macSize         // 106
	finishedLen = 2 + macSize                 // 34
)

// hello is a ClientHello or ServerHello.
type hello struct {
	typ        byte
	flags      byte
	suite      Suite  // the server's choice; 0 in a ClientHello
	suites     uint16 // bit s set: the sender accepts suite s
	maxPayload uint32 // the largest frame payload the sender accepts
	nonce      [nonceSize]byte
	pub        [pubKeySize]byte // zero unless flags&flagEphemeral
}

// marshal writes the hello's body (all but the MAC) to b.
func (h *hello) marshal(b *[helloSize]byte) {
	b[0] = Version
	b[1] = h.typ
	b[2] = h.flags
	b[3] = byte(h.suite)
	binary.BigEndian.PutUint16(b[4:6], h.suites)
	binary.BigEndian.PutUint32(b[6:10], h.maxPayload)
	copy(b[10:10+nonceSize], h.nonce[:])
	copy(b[10+nonceSize:helloBody], h.pub[:])
}

// parseHello decodes an authenticated hello of type want. It checks the
// structure only; the caller has verified the MAC.
func parseHello(b []byte, want byte) (*hello, error) {
	if len(b) != helloSize {
		return nil, fmt.Errorf("%w: hello of %d bytes", ErrMalformedHandshake, len(b))
	}
	if b[0] != Version {
		return nil, ErrVersion
	}
	h := &hello{
		typ:        b[1],
		flags:      b[2],
		suite:      Suite(b[3]),
		suites:     binary.BigEndian.Uint16(b[4:6]),
		maxPayload: binary.BigEndian.Uint32(b[6:10]),
	}
	copy(h.nonce[:], b[10:10+nonceSize])
	copy(h.pub[:], b[10+nonceSize:helloBody])
	switch {
	case h.typ != want:
		return nil, fmt.Errorf("%w: message type %d, want %d", ErrMalformedHandshake, h.typ, want)
	case h.flags&^flagEphemeral != 0:
		return nil, fmt.Errorf("%w: unknown flags %#x", ErrMalformedHandshake, h.flags)
	case h.flags&flagEphemeral == 0 && h.pub != [pubKeySize]byte{}:
		return nil, fmt.Errorf("%w: public key without its flag", ErrMalformedHandshake)
	case h.maxPayload < MinPayloadLimit || h.maxPayload > MaxPayloadLimit:
		return nil, fmt.Errorf("%w: max payload %d", ErrMalformedHandshake, h.maxPayload)
	case h.suites&1 != 0 || h.suites == 0:
		return nil, fmt.Errorf("%w: suite mask %#x", ErrMalformedHandshake, h.suites)
	case want == msgClientHello && h.suite != 0:
		return nil, fmt.Errorf("%w: client chose a suite", ErrMalformedHandshake)
	case want == msgServerHello && (h.suite > 15 || h.suites&(1<<h.suite) == 0):
		return nil, fmt.Errorf("%w: server chose a suite it does not accept", ErrMalformedHandshake)
	}
	return h, nil
}
