package spipe

import (
	"encoding/binary"
	"fmt"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// Version is the protocol version this package speaks: the first byte of
// every handshake message. Version 2 is the frozen wire format; later
// features are negotiated inside it (the hello's mode and flags), not by a
// new version.
const Version = 2

// Handshake message types (byte 1 of each message).
const (
	msgClientHello    = 1
	msgServerHello    = 2
	msgClientFinished = 3
)

// Hello flags (byte 2). A server ignores ClientHello bits it does not know,
// so an optional feature can be offered to servers that predate it; a
// ServerHello sets only bits the client set and this version defines.
const (
	flagEphemeral = 1 // an X25519 public key is present
	knownFlags    = flagEphemeral
)

// Modes (byte 3): what runs over the stream once the handshake is done.
// The client asks for one; the server runs it or refuses the connection.
// Mode 2 was an earlier multiplexed mode, retired: a server refuses it as
// any mode it does not run, and the value is never reused.
const (
	modeStream = 1 // one byte stream, half-closable
	modeMux    = 3 // many streams in frames of their own (package mux)
)

// Sizes of the handshake messages; see docs/PROTOCOL.md for the layout.
const (
	nonceSize   = 32
	pubKeySize  = 32
	macSize     = 32
	helloBody   = 11 + nonceSize + pubKeySize // everything the MAC covers
	helloSize   = helloBody + macSize         // 107
	finishedLen = 2 + macSize                 // 34
)

// The largest and smallest frame payload (inner plaintext) a side may
// announce.
const (
	minPayload = 64
	maxPayload = frame.MaxPayload
)

// hello is a ClientHello or ServerHello.
type hello struct {
	typ        byte
	flags      byte
	mode       byte
	suite      byte   // the server's choice; 0 in a ClientHello
	suites     uint16 // bit s set: the sender accepts suite s
	maxPayload uint32 // the largest inner plaintext the sender accepts
	nonce      [nonceSize]byte
	pub        [pubKeySize]byte // zero unless flags&flagEphemeral
}

// marshal writes the hello's body (all but the MAC) to b.
func (h *hello) marshal(b *[helloSize]byte) {
	b[0] = Version
	b[1] = h.typ
	b[2] = h.flags
	b[3] = h.mode
	b[4] = h.suite
	binary.BigEndian.PutUint16(b[5:7], h.suites)
	binary.BigEndian.PutUint32(b[7:11], h.maxPayload)
	copy(b[11:11+nonceSize], h.nonce[:])
	copy(b[11+nonceSize:helloBody], h.pub[:])
}

// parseHello decodes an authenticated hello of type want and checks its
// structure (docs/PROTOCOL.md 2.5, step 3); the caller has verified the
// MAC. A ClientHello's unknown flag bits are cleared here: a server
// ignores them. Negotiation (suite, mode, forward secrecy) is the
// caller's.
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
		mode:       b[3],
		suite:      b[4],
		suites:     binary.BigEndian.Uint16(b[5:7]),
		maxPayload: binary.BigEndian.Uint32(b[7:11]),
	}
	copy(h.nonce[:], b[11:11+nonceSize])
	copy(h.pub[:], b[11+nonceSize:helloBody])
	if want == msgClientHello {
		h.flags &= knownFlags
	}
	switch {
	case h.typ != want:
		return nil, fmt.Errorf("%w: message type %d, want %d", ErrMalformedHandshake, h.typ, want)
	case h.flags&^knownFlags != 0:
		return nil, fmt.Errorf("%w: unknown flags %#x", ErrMalformedHandshake, h.flags)
	case h.flags&flagEphemeral == 0 && h.pub != [pubKeySize]byte{}:
		return nil, fmt.Errorf("%w: public key without its flag", ErrMalformedHandshake)
	case h.mode == 0:
		return nil, fmt.Errorf("%w: mode 0", ErrMalformedHandshake)
	case h.maxPayload < minPayload || h.maxPayload > maxPayload:
		return nil, fmt.Errorf("%w: max payload %d", ErrMalformedHandshake, h.maxPayload)
	case h.suites&1 != 0 || h.suites == 0:
		return nil, fmt.Errorf("%w: suite mask %#x", ErrMalformedHandshake, h.suites)
	case want == msgClientHello && h.suite != 0:
		return nil, fmt.Errorf("%w: client chose a suite", ErrMalformedHandshake)
	case want == msgServerHello && (h.suite == 0 || h.suite > 15 || h.suites&(1<<h.suite) == 0):
		return nil, fmt.Errorf("%w: server chose suite %d, not in its own mask", ErrMalformedHandshake, h.suite)
	}
	return h, nil
}
