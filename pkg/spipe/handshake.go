package spipe

import (
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// handshakeResult is what a completed handshake hands to the record layer.
type handshakeResult struct {
	suite          aead.Suite
	forwardSecrecy bool
	keyIndex       int
	mode           byte
	sendLimit      int // min(own MaxPayload, peer's)
	sendKey        []byte
	recvKey        []byte
}

// readMessage reads one handshake message into b, checking the version
// byte as soon as it is in, so a peer speaking another version is named
// as such even if its messages are shorter. A message that arrived whole
// (the usual case) takes one read.
func readMessage(r io.Reader, b []byte) error {
	n, err := io.ReadAtLeast(r, b, 1)
	if err != nil {
		return readErr(err)
	}
	if b[0] != Version {
		return ErrVersion
	}
	if _, err := io.ReadFull(r, b[n:]); err != nil {
		return readErr(err)
	}
	return nil
}

// readErr names an end of stream during the handshake as ErrTruncated.
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrTruncated
	}
	return err
}

// randReader is crypto/rand unless the settings replace it (tests).
func (s *settings) randReader() io.Reader {
	if s.rand != nil {
		return s.rand
	}
	return rand.Reader
}

// newHello returns a hello of type typ with a fresh nonce and, if
// ephemeral, a fresh X25519 key pair (the private half is returned). The
// private key is 32 bytes from the random source taken as an X25519
// scalar, so a fixed source gives a reproducible transcript.
func newHello(typ byte, s *settings, ephemeral bool) (*hello, *ecdh.PrivateKey, error) {
	h := &hello{typ: typ, mode: s.mode, suites: suiteMask(s.suites), maxPayload: uint32(s.maxPayload)}
	r := s.randReader()
	if _, err := io.ReadFull(r, h.nonce[:]); err != nil {
		return nil, nil, fmt.Errorf("reading random nonce: %w", err)
	}
	if !ephemeral {
		return h, nil, nil
	}
	var scalar [32]byte
	defer clear(scalar[:])
	if _, err := io.ReadFull(r, scalar[:]); err != nil {
		return nil, nil, fmt.Errorf("reading random key: %w", err)
	}
	priv, err := ecdh.X25519().NewPrivateKey(scalar[:])
	if err != nil {
		return nil, nil, err
	}
	h.flags |= flagEphemeral
	copy(h.pub[:], priv.PublicKey().Bytes())
	return h, priv, nil
}

// x25519 computes the shared secret with the peer's public key. An invalid
// or low-order key (all-zero output) is a malformed handshake.
func x25519(priv *ecdh.PrivateKey, peer *[pubKeySize]byte) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(peer[:])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedHandshake, err)
	}
	shared, err := priv.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedHandshake, err)
	}
	return shared, nil
}

// clientHandshake runs the client side: send ClientHello, read and verify
// ServerHello, derive keys, send ClientFinished.
func clientHandshake(rw io.ReadWriter, s *settings) (*handshakeResult, error) {
	ipsk := importKey(&s.keys[0].psk, s.context)
	defer clear(ipsk[:])
	ch, priv, err := newHello(msgClientHello, s, s.pfs)
	if err != nil {
		return nil, err
	}
	var transcript [2 * helloSize]byte
	c1 := (*[helloSize]byte)(transcript[:helloSize])
	ch.marshal(c1)
	helloMAC(c1[helloBody:], &ipsk, nil, c1[:helloBody])
	if _, err := rw.Write(c1[:]); err != nil {
		return nil, err
	}

	s1 := transcript[helloSize:]
	if err := readMessage(rw, s1); err != nil {
		if errors.Is(err, ErrTruncated) {
			return nil, errServerClosed
		}
		return nil, err
	}
	var want [macSize]byte
	helloMAC(want[:], &ipsk, c1[:], s1[:helloBody])
	if subtle.ConstantTimeCompare(want[:], s1[helloBody:]) != 1 {
		return nil, ErrAuthentication
	}
	sh, err := parseHello(s1, msgServerHello)
	if err != nil {
		return nil, err
	}
	switch {
	case ch.suites&(1<<sh.suite) == 0:
		return nil, fmt.Errorf("%w: server chose suite %d, not offered", ErrMalformedHandshake, sh.suite)
	case sh.mode != ch.mode:
		return nil, fmt.Errorf("%w: server answered mode %d to mode %d", ErrMalformedHandshake, sh.mode, ch.mode)
	case sh.flags&^ch.flags != 0:
		return nil, fmt.Errorf("%w: server set flags %#x the client did not", ErrMalformedHandshake, sh.flags&^ch.flags)
	}
	res := &handshakeResult{suite: aead.Suite(sh.suite), mode: sh.mode, sendLimit: min(s.maxPayload, int(sh.maxPayload))}

	var shared []byte
	switch {
	case sh.flags&flagEphemeral != 0:
		if shared, err = x25519(priv, &sh.pub); err != nil {
			return nil, err
		}
		defer clear(shared)
		res.forwardSecrecy = true
	case s.requirePFS:
		return nil, ErrForwardSecrecyRequired
	}

	th := sha256.Sum256(transcript[:])
	keys, err := deriveKeys(&ipsk, shared, th[:])
	if err != nil {
		return nil, err
	}
	defer keys.wipe()
	var fin [finishedLen]byte
	fin[0], fin[1] = Version, msgClientFinished
	finishedMAC(fin[2:], keys.finished, th[:])
	if _, err := rw.Write(fin[:]); err != nil {
		return nil, err
	}
	res.sendKey = append([]byte(nil), keys.clientToServer...)
	res.recvKey = append([]byte(nil), keys.serverToClient...)
	return res, nil
}

// runs reports whether a server with these settings runs mode.
func (s *settings) runs(mode byte) bool {
	return mode == modeStream || mode == modeMux && s.multiplex
}

// serverHandshake runs the server side: read ClientHello and find its key,
// choose mode, suite and forward secrecy, send ServerHello, derive keys,
// verify ClientFinished. It returns only once the client has proven the
// key.
func serverHandshake(rw io.ReadWriter, s *settings) (*handshakeResult, error) {
	var transcript [2 * helloSize]byte
	c1 := transcript[:helloSize]
	if err := readMessage(rw, c1); err != nil {
		return nil, err
	}
	ipsks := make([][32]byte, len(s.keys))
	defer clear(ipsks)
	for i, k := range s.keys {
		ipsks[i] = importKey(&k.psk, s.context)
	}
	ipsk, index, ok := matchClientKey(ipsks, c1[:helloBody], c1[helloBody:])
	defer clear(ipsk[:])
	if !ok {
		return nil, ErrAuthentication
	}
	ch, err := parseHello(c1, msgClientHello)
	if err != nil {
		return nil, err
	}
	if !s.runs(ch.mode) {
		return nil, fmt.Errorf("%w: mode %d", ErrUnsupportedMode, ch.mode)
	}
	offered := ch.flags&flagEphemeral != 0
	if !offered && s.requirePFS {
		return nil, ErrForwardSecrecyRequired
	}
	var suite aead.Suite
	for _, su := range s.suites {
		if ch.suites&(1<<su) != 0 {
			suite = su
			break
		}
	}
	if suite == 0 {
		return nil, ErrNoSharedSuite
	}

	sh, priv, err := newHello(msgServerHello, s, offered && s.pfs)
	if err != nil {
		return nil, err
	}
	sh.suite = byte(suite)
	sh.mode = ch.mode
	s1 := (*[helloSize]byte)(transcript[helloSize:])
	sh.marshal(s1)
	helloMAC(s1[helloBody:], &ipsk, c1, s1[:helloBody])
	res := &handshakeResult{suite: suite, keyIndex: index, mode: ch.mode, sendLimit: min(s.maxPayload, int(ch.maxPayload))}

	var shared []byte
	if priv != nil {
		if shared, err = x25519(priv, &ch.pub); err != nil {
			return nil, err
		}
		defer clear(shared)
		res.forwardSecrecy = true
	}
	if _, err := rw.Write(s1[:]); err != nil {
		return nil, err
	}

	th := sha256.Sum256(transcript[:])
	keys, err := deriveKeys(&ipsk, shared, th[:])
	if err != nil {
		return nil, err
	}
	defer keys.wipe()
	var fin [finishedLen]byte
	if err := readMessage(rw, fin[:]); err != nil {
		return nil, err
	}
	var want [finishedLen]byte
	want[0], want[1] = Version, msgClientFinished
	finishedMAC(want[2:], keys.finished, th[:])
	if subtle.ConstantTimeCompare(want[:], fin[:]) != 1 {
		return nil, ErrAuthentication
	}
	res.sendKey = append([]byte(nil), keys.serverToClient...)
	res.recvKey = append([]byte(nil), keys.clientToServer...)
	return res, nil
}
