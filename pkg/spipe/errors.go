package spipe

import (
	"errors"
	"fmt"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// Sentinel errors. Every error this package returns for a protocol failure
// wraps exactly one of them, so callers tell cases apart with errors.Is.
// None of them carries key material or plaintext. Their text has no
// package prefix because Conn's methods return them wrapped with context,
// e.g. "spipe: read: frame 3: frame failed authentication (...)".
var (
	// ErrVersion: the peer speaks another protocol version (its first byte
	// is not [Version]).
	ErrVersion = errors.New("peer speaks another protocol version")

	// ErrAuthentication: a handshake message failed its MAC. The peer holds
	// a different key or context, or the message was modified, replayed,
	// reflected or reordered on the wire; the cases are indistinguishable
	// by design.
	ErrAuthentication = errors.New("handshake authentication failed (wrong key or context, or a modified message)")

	// ErrNoSharedSuite: the two configs have no cipher suite in common
	// (reported by the server, which then closes the connection).
	ErrNoSharedSuite = errors.New("no cipher suite in common")

	// ErrForwardSecrecyRequired: this side requires forward secrecy and the
	// peer did not do the X25519 exchange.
	ErrForwardSecrecyRequired = errors.New("peer refused forward secrecy, which is required")

	// ErrUnsupportedMode: the client asked for a mode (what runs over the
	// stream) that this server does not run (reported by the server, which
	// then closes the connection).
	ErrUnsupportedMode = errors.New("client asked for a mode this server does not run")

	// ErrMalformedHandshake: an authentic handshake message that breaks the
	// protocol (impossible suite choice, a key without its flag, an
	// invalid X25519 key). Only a peer holding the key can cause it.
	ErrMalformedHandshake = errors.New("malformed handshake message")

	// ErrTampered: a frame failed authentication: it was modified, dropped,
	// duplicated, reordered or injected on the wire. No byte of it was
	// returned. It is frame.ErrTampered.
	ErrTampered = frame.ErrTampered

	// ErrTruncated: the connection ended (TCP EOF) in the middle of a frame
	// or without an authenticated close-write frame, so the stream may have
	// been cut short. During a client's handshake it means the server
	// closed the connection, which is how a server refuses a client (the
	// error then lists the likely causes).
	ErrTruncated = errors.New("connection ended without authenticated close")

	// ErrFrameTooLarge: a frame header announced a payload above the
	// receiver's limit. Detected before anything is allocated or read. It
	// is frame.ErrTooLarge.
	ErrFrameTooLarge = frame.ErrTooLarge

	// ErrMalformedFrame: an authentic frame that breaks the format (no or
	// an unknown type, data in a control frame). Only a peer holding the
	// session key can cause it. It is frame.ErrMalformed.
	ErrMalformedFrame = frame.ErrMalformed

	// ErrCounterExhausted: a direction used up its 2^64-1 frame numbers; the
	// nonce would repeat, so the connection stops.
	ErrCounterExhausted = errors.New("frame counter exhausted")
)

// ErrInvalidKey: a Config holds no key, or a nil or zero-value Key (one
// not made by NewKey or LoadKeyFile, which would work as an all-zero key
// at both ends). Validate returns it wrapped, and so do Dial, Listen and
// a Conn's first Handshake, Read or Write with such a Config.
var ErrInvalidKey = errors.New("Config needs keys made by NewKey or LoadKeyFile")

// errWriteClosed is returned by Write, ReadFrom and SendKeepalive after
// CloseWrite: a caller's bug, not a condition to branch on.
var errWriteClosed = errors.New("spipe: write after CloseWrite")

// errServerClosed is a client's ErrTruncated during the handshake: the
// server says nothing when it refuses, so name what usually causes it.
var errServerClosed = fmt.Errorf("server closed the connection during the handshake "+
	"(wrong key or context, no cipher suite in common, a forward-secrecy policy, "+
	"a mode the server does not run, or not a spipe server): %w", ErrTruncated)
