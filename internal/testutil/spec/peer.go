package spec

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"

	"golang.org/x/crypto/curve25519"
)

// Peer is a client that holds the key, built from the document alone: it
// runs the handshake over a connection and then seals and sends whatever
// frames its caller wants, well-formed or not, one at a time or many to
// one write, and opens what the server sends. It is the hostile key
// holder of the stress tests.
type Peer struct {
	Conn    net.Conn
	MaxSend int // the server's announced limit: the largest inner plaintext it accepts

	suite            Suite
	send, recv       Construction
	sendCtr, recvCtr uint64
	padTo            int
}

// Dial runs a client handshake over conn with the key file, context and
// mode given, offering suite 1 (ChaCha20-Poly1305), with forward secrecy
// and a 1 MiB limit, and returns the peer ready to send frames padded to
// padTo (0: none).
func Dial(conn net.Conn, keyFile []byte, context string, mode, padTo int) (*Peer, error) {
	_, ipsk := ImportKey(keyFile, context)
	priv := make([]byte, 32)
	nonce := make([]byte, 32)
	if _, err := rand.Read(priv); err != nil {
		return nil, err
	}
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	me := EndInputs{Nonce: nonce, EphemeralPrivate: priv, Suites: []int{1}, MaxPayload: 1 << 20, PadTo: padTo}
	ch := Hello(1, me, mode, 0, ipsk, nil)
	if _, err := conn.Write(ch); err != nil {
		return nil, err
	}
	sh := make([]byte, 107)
	if _, err := io.ReadFull(conn, sh); err != nil {
		return nil, fmt.Errorf("server hello: %w", err)
	}
	mac := hmacSHA256(ipsk, ch, sh[:75])
	if !hmac.Equal(mac, sh[75:]) {
		return nil, errors.New("server hello fails its MAC")
	}
	if sh[3] != byte(mode) || sh[4] != 1 {
		return nil, fmt.Errorf("server answered mode %d, suite %d", sh[3], sh[4])
	}
	var shared []byte
	if sh[2]&1 != 0 {
		var err error
		if shared, err = curve25519.X25519(priv, sh[43:75]); err != nil {
			return nil, err
		}
	}
	k := Schedule(ipsk, ch, sh, shared)
	if _, err := conn.Write(ClientFinished(k)); err != nil {
		return nil, err
	}
	s := Suites[0]
	limit := int(sh[7])<<24 | int(sh[8])<<16 | int(sh[9])<<8 | int(sh[10])
	return &Peer{Conn: conn, MaxSend: limit, suite: s, send: NewConstruction(s, k.C2S), recv: NewConstruction(s, k.S2C),
		padTo: padTo}, nil
}

// Frame seals the next frame of type typ (section 4's name) with this
// data and these fields, and returns it without sending it: a caller
// packs many into one write.
func (p *Peer) Frame(typ string, data []byte, fields map[string]uint64) []byte {
	return p.RawFrame(Inner(typ, Body(typ, data, fields), p.padTo))
}

// RawFrame seals any inner plaintext as the next frame.
func (p *Peer) RawFrame(inner []byte) []byte {
	f := SealFrame(p.suite, p.send, p.sendCtr, inner)
	p.sendCtr++
	return f
}

// Send seals and sends one frame.
func (p *Peer) Send(typ string, data []byte, fields map[string]uint64) error {
	_, err := p.Conn.Write(p.Frame(typ, data, fields))
	return err
}

// Read reads and opens the server's next frame, returning its type byte
// and body (data and fields; padding and type removed).
func (p *Peer) Read() (byte, []byte, error) {
	var header [3]byte
	if _, err := io.ReadFull(p.Conn, header[:]); err != nil {
		return 0, nil, err
	}
	n := int(header[0])<<16 | int(header[1])<<8 | int(header[2])
	sealed := make([]byte, n+16)
	if _, err := io.ReadFull(p.Conn, sealed); err != nil {
		return 0, nil, err
	}
	nonce, ad := NonceAndAD(p.suite, p.recvCtr, header[:])
	inner, err := p.recv.Open(nonce, sealed, ad)
	if err != nil {
		return 0, nil, fmt.Errorf("server frame %d: %w", p.recvCtr, err)
	}
	p.recvCtr++
	inner = bytes.TrimRight(inner, "\x00")
	if len(inner) == 0 {
		return 0, nil, errors.New("server frame without a type")
	}
	return inner[len(inner)-1], inner[:len(inner)-1], nil
}
