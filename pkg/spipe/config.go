package spipe

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// DefaultMaxPayload is the frame payload limit of a Config that sets
// none: 64 KiB of inner plaintext (data, type byte and padding).
const DefaultMaxPayload = 64 << 10

// MaxPayloadLimit is the largest MaxPayload a Config may set (1 MiB); the
// smallest is 64.
const MaxPayloadLimit = maxPayload

// defaultHandshakeTimeout bounds a handshake when the Config sets no
// HandshakeTimeout.
const defaultHandshakeTimeout = 10 * time.Second

// maxContext is the longest Config.Context, in bytes: its length is one
// byte in the key import.
const maxContext = 255

// ForwardSecrecy is a side's forward-secrecy policy: whether it does the
// ephemeral X25519 exchange, and whether it insists that the peer does.
// The zero value is ForwardSecrecyPreferred.
type ForwardSecrecy int

const (
	// ForwardSecrecyPreferred does the X25519 exchange whenever the peer
	// does too, and accepts a peer that does not. The default.
	ForwardSecrecyPreferred ForwardSecrecy = iota
	// ForwardSecrecyRequired refuses a peer that does not do the exchange
	// (a server closes the connection; a client fails with
	// ErrForwardSecrecyRequired).
	ForwardSecrecyRequired
	// ForwardSecrecyOff skips the exchange: session keys then depend only
	// on the key and the two nonces, so a later theft of the key file
	// decrypts recorded sessions. Handshakes are cheaper.
	ForwardSecrecyOff
)

// DefaultSuites returns the suite list of a Config that sets none:
// ChaCha20-Poly1305 preferred, then XSalsa20-Poly1305 (NaCl secretbox).
// Reduced-round suites are never in it. Each call returns a new slice.
func DefaultSuites() []aead.Suite {
	return []aead.Suite{aead.ChaCha20Poly1305, aead.XSalsa20Poly1305}
}

// Config configures a client or server. A Config may be shared by many
// connections but must not be modified once passed to Client, Server, Dial
// or Listen; to rotate keys, build a new Config and use it for later
// connections (open connections keep the keys they were made with).
type Config struct {
	// Keys holds the pre-shared keys. A client authenticates with Keys[0];
	// a server admits a client holding any of them (key rotation), finding
	// the right one in time independent of which matched. At least one key
	// is required.
	Keys []*Key

	// Context names the tunnel, up to 255 bytes; both ends must set the
	// same one. It is bound into every handshake MAC and into the session
	// keys, so a handshake between different contexts fails as one with
	// different keys does. When one key serves several tunnels, or a host
	// uses the same key for its own client and server, give each tunnel
	// its own context: otherwise an attacker on the network can steer a
	// client to another tunnel's server, or reflect it into its own
	// host's server. Empty by default.
	Context string

	// Suites lists the acceptable cipher suites (every suite of pkg/aead
	// is a protocol suite) in preference order. Nil means DefaultSuites().
	// A server picks the first suite of its own list that the client
	// offers; the order of a client's list does not matter. Reduced-round
	// suites are therefore used only when both sides list them.
	Suites []aead.Suite

	// ForwardSecrecy is this side's forward-secrecy policy; the zero value
	// is ForwardSecrecyPreferred.
	ForwardSecrecy ForwardSecrecy

	// MaxPayload is the largest frame payload (inner plaintext: data, one
	// type byte and padding) this side accepts and sends, 64 to
	// MaxPayloadLimit; 0 means DefaultMaxPayload. Each side announces its
	// limit in the handshake and a sender uses the smaller of the two.
	MaxPayload int

	// PadTo, if positive, pads every frame this side sends to a multiple of
	// PadTo bytes of payload (capped at the frame limit), hiding the size
	// of writes and making data, keepalive and close-write frames look
	// alike, at the cost of bandwidth. 0 sends no padding. It must not
	// exceed MaxPayload.
	PadTo int

	// HandshakeTimeout bounds the handshake when the context passed to
	// HandshakeContext has no earlier deadline. 0 means 10 seconds; a
	// negative value means no bound beyond the context.
	HandshakeTimeout time.Duration

	// Multiplex selects the multiplexed mode (mode 3, docs/PROTOCOL.md
	// section 7): many streams over one connection, each in frames of its
	// own, run by package [github.com/spipe-dev/spipe/pkg/spipe/mux]. A
	// client with Multiplex set asks for it, and its handshake fails
	// unless the server runs it. A server with Multiplex set runs it for
	// clients that ask and the plain byte stream for the others, so one
	// listener serves both; ConnectionState.Multiplexed says which a
	// connection runs. A server without it refuses clients that ask for
	// the multiplexed mode. The retired mode 2 is refused either way.
	Multiplex bool

	// rand, if set, replaces crypto/rand for nonces and ephemeral keys:
	// the transcript tests record sessions with fixed randomness.
	rand io.Reader
	// mode, if set, is the mode a client asks for instead of the one
	// Multiplex selects: the tests ask for modes no server runs.
	mode byte
}

// settings is a validated Config with defaults applied.
type settings struct {
	keys             []*Key
	context          string
	suites           []aead.Suite
	pfs, requirePFS  bool
	maxPayload       int
	padTo            int
	handshakeTimeout time.Duration
	rand             io.Reader
	mode             byte // what a client asks for
	multiplex        bool // a server also runs modeMux
}

func (c *Config) settings() (*settings, error) {
	if c == nil {
		return nil, errors.New("nil Config")
	}
	s := &settings{
		keys:             c.Keys,
		context:          c.Context,
		suites:           c.Suites,
		pfs:              c.ForwardSecrecy != ForwardSecrecyOff,
		requirePFS:       c.ForwardSecrecy == ForwardSecrecyRequired,
		maxPayload:       c.MaxPayload,
		padTo:            c.PadTo,
		handshakeTimeout: c.HandshakeTimeout,
		rand:             c.rand,
		mode:             c.mode,
		multiplex:        c.Multiplex,
	}
	if len(s.keys) == 0 {
		return nil, fmt.Errorf("%w: it has none", ErrInvalidKey)
	}
	for i, k := range s.keys {
		switch {
		case k == nil:
			return nil, fmt.Errorf("%w: Keys[%d] is nil", ErrInvalidKey, i)
		case k.zero():
			return nil, fmt.Errorf("%w: Keys[%d] is the zero value", ErrInvalidKey, i)
		}
	}
	if len(s.context) > maxContext {
		return nil, fmt.Errorf("context string of %d bytes: at most %d", len(s.context), maxContext)
	}
	if s.suites == nil {
		s.suites = DefaultSuites()
	}
	if len(s.suites) == 0 {
		return nil, errors.New("Config has an empty suite list")
	}
	var seen uint16
	for _, su := range s.suites {
		if !su.Valid() || su > 15 {
			return nil, fmt.Errorf("Config lists unknown suite %d", uint8(su))
		}
		if seen&(1<<su) != 0 {
			return nil, fmt.Errorf("Config lists suite %s twice", su)
		}
		seen |= 1 << su
	}
	switch c.ForwardSecrecy {
	case ForwardSecrecyPreferred, ForwardSecrecyRequired, ForwardSecrecyOff:
	default:
		return nil, fmt.Errorf("unknown ForwardSecrecy policy %d", c.ForwardSecrecy)
	}
	if s.maxPayload == 0 {
		s.maxPayload = DefaultMaxPayload
	}
	if s.maxPayload < minPayload || s.maxPayload > maxPayload {
		return nil, fmt.Errorf("MaxPayload %d outside %d..%d", s.maxPayload, minPayload, maxPayload)
	}
	if s.padTo < 0 || s.padTo > s.maxPayload {
		return nil, fmt.Errorf("PadTo %d outside 0..MaxPayload (%d)", s.padTo, s.maxPayload)
	}
	if s.handshakeTimeout == 0 {
		s.handshakeTimeout = defaultHandshakeTimeout
	}
	if s.mode == 0 {
		s.mode = modeStream
		if s.multiplex {
			s.mode = modeMux
		}
	}
	return s, nil
}

// Validate reports whether the Config is usable, with the reason if not.
// Dial and Listen report the same error before they connect; Client and
// Server from the first Handshake, Read or Write.
func (c *Config) Validate() error {
	if _, err := c.settings(); err != nil {
		return fmt.Errorf("spipe: %w", err)
	}
	return nil
}

// suiteMask is the handshake's bit mask of list.
func suiteMask(list []aead.Suite) uint16 {
	var m uint16
	for _, s := range list {
		m |= 1 << s
	}
	return m
}
