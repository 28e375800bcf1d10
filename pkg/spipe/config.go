package spipe

import (
	"errors"
	"fmt"
	"time"
)

// Payload limits, in bytes of one frame's sealed payload (padding included).
const (
	// DefaultMaxPayload is the payload limit of a Config that sets none.
	DefaultMaxPayload = 64 << 10
	// MaxPayloadLimit is the largest MaxPayload a Config may set.
	MaxPayloadLimit = 1 << 20
	// MinPayloadLimit is the smallest MaxPayload a Config may set.
	MinPayloadLimit = 64
)

// DefaultHandshakeTimeout bounds a handshake when the Config sets no
// HandshakeTimeout.
const DefaultHandshakeTimeout = 10 * time.Second

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

	// Suites lists the acceptable cipher suites in preference order. Nil
	// means DefaultSuites. The server picks the first suite of its own list
	// that the client offers, so reduced-round suites are used only when
	// both sides list them.
	Suites []Suite

	// DisableForwardSecrecy skips the X25519 exchange: session keys then
	// depend only on the PSK and the nonces, so a later key compromise
	// exposes recorded traffic. Handshakes are cheaper.
	DisableForwardSecrecy bool

	// RequireForwardSecrecy refuses a peer that does not do the X25519
	// exchange (a server closes the connection; a client fails with
	// ErrForwardSecrecyRequired). It contradicts DisableForwardSecrecy.
	RequireForwardSecrecy bool

	// MaxPayload is the largest frame payload this side accepts and sends,
	// in bytes (MinPayloadLimit..MaxPayloadLimit; 0 means
	// DefaultMaxPayload). Each side announces its limit in the handshake and
	// the sender uses the smaller of the two.
	MaxPayload int

	// PadTo, if positive, pads every frame this side sends to a multiple of
	// PadTo bytes (capped at the frame limit), hiding write sizes at the
	// cost of bandwidth. 0 sends no padding. It must not exceed MaxPayload.
	PadTo int

	// HandshakeTimeout bounds the handshake when the context passed to
	// Handshake has no earlier deadline. 0 means DefaultHandshakeTimeout;
	// a negative value means no bound beyond the context.
	HandshakeTimeout time.Duration
}

// settings is a validated Config with defaults applied.
type settings struct {
	keys             []*Key
	suites           []Suite
	pfs, requirePFS  bool
	maxPayload       int
	padTo            int
	handshakeTimeout time.Duration
}

func (c *Config) settings() (*settings, error) {
	if c == nil {
		return nil, errors.New("nil Config")
	}
	s := &settings{
		keys:             c.Keys,
		suites:           c.Suites,
		pfs:              !c.DisableForwardSecrecy,
		requirePFS:       c.RequireForwardSecrecy,
		maxPayload:       c.MaxPayload,
		padTo:            c.PadTo,
		handshakeTimeout: c.HandshakeTimeout,
	}
	if len(s.keys) == 0 {
		return nil, errors.New("Config has no key")
	}
	for _, k := range s.keys {
		if k == nil {
			return nil, errors.New("Config has a nil key")
		}
	}
	if s.suites == nil {
		s.suites = DefaultSuites
	}
	if len(s.suites) == 0 {
		return nil, errors.New("Config has an empty suite list")
	}
	var seen uint16
	for _, su := range s.suites {
		if !su.Valid() {
			return nil, fmt.Errorf("Config lists unknown suite %d", uint8(su))
		}
		if seen&(1<<su) != 0 {
			return nil, fmt.Errorf("Config lists suite %s twice", su)
		}
		seen |= 1 << su
	}
	if s.requirePFS && !s.pfs {
		return nil, errors.New("Config both disables and requires forward secrecy")
	}
	if s.maxPayload == 0 {
		s.maxPayload = DefaultMaxPayload
	}
	if s.maxPayload < MinPayloadLimit || s.maxPayload > MaxPayloadLimit {
		return nil, fmt.Errorf("MaxPayload %d outside %d..%d", s.maxPayload, MinPayloadLimit, MaxPayloadLimit)
	}
	if s.padTo < 0 || s.padTo > s.maxPayload {
		return nil, fmt.Errorf("PadTo %d outside 0..MaxPayload (%d)", s.padTo, s.maxPayload)
	}
	if s.handshakeTimeout == 0 {
		s.handshakeTimeout = DefaultHandshakeTimeout
	}
	return s, nil
}

// Validate reports whether the Config is usable, with the reason if not.
// Client, Server, Dial and Listen report the same error (Client and Server
// from the first Handshake, Read or Write).
func (c *Config) Validate() error {
	if _, err := c.settings(); err != nil {
		return fmt.Errorf("spipe: %w", err)
	}
	return nil
}
