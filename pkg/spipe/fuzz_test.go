package spipe

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// FuzzParseHello: parseHello never panics, and whatever it accepts
// re-encodes to the same body, except for a ClientHello's flag bits this
// version does not define, which a server ignores (clears).
func FuzzParseHello(f *testing.F) {
	s, _ := (&Config{Keys: []*Key{{psk: [32]byte{1}}}}).settings()
	for _, typ := range []byte{msgClientHello, msgServerHello} {
		for _, eph := range []bool{false, true} {
			h, _, err := newHello(typ, s, eph)
			if err != nil {
				f.Fatal(err)
			}
			if typ == msgServerHello {
				h.suite = byte(aead.ChaCha20Poly1305)
			}
			var b [helloSize]byte
			h.marshal(&b)
			f.Add(b[:])
		}
	}
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{Version, msgClientHello, 0xff}, helloSize/3+1)[:helloSize])
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, want := range []byte{msgClientHello, msgServerHello} {
			h, err := parseHello(b, want)
			if err != nil {
				continue
			}
			var out [helloSize]byte
			h.marshal(&out)
			in := append([]byte(nil), b[:helloBody]...)
			if want == msgClientHello {
				in[2] &= knownFlags
			}
			if !bytes.Equal(out[:helloBody], in) {
				t.Fatalf("parse/marshal mismatch:\n%x\n%x", b[:helloBody], out[:helloBody])
			}
		}
	})
}

// FuzzServerHandshake feeds arbitrary bytes to a server as its client. No
// input holds the key, so the handshake must fail, and never panic.
func FuzzServerHandshake(f *testing.F) {
	key := &Key{psk: [32]byte{1, 2, 3}}
	cfg := &Config{Keys: []*Key{{psk: [32]byte{9}}, key}, HandshakeTimeout: time.Second}
	// Seeds: a valid ClientHello under another key, and garbage.
	s, _ := (&Config{Keys: []*Key{{psk: [32]byte{7}}}}).settings()
	h, _, _ := newHello(msgClientHello, s, true)
	var c1 [helloSize]byte
	h.marshal(&c1)
	helloMAC(c1[helloBody:], &s.keys[0].psk, nil, c1[:helloBody])
	f.Add(append(c1[:], make([]byte, finishedLen)...))
	f.Add([]byte{Version, msgClientHello})
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, input []byte) {
		a, b := net.Pipe()
		defer a.Close()
		go func() {
			b.Write(input)
			b.Close()
		}()
		go io.Copy(io.Discard, b)
		if err := Server(a, cfg).Handshake(); err == nil {
			t.Fatal("handshake succeeded without the key")
		}
	})
}

// FuzzFrameReader feeds a receiving Conn a stream derived from valid
// frames. Whatever it delivers must be a prefix of the data that was
// sealed: a modified stream may end early with an error, but never yields
// a byte that was not sent.
func FuzzFrameReader(f *testing.F) {
	key := bytes.Repeat([]byte{0x42}, 32)
	seal, _ := frame.NewCipher(aead.ChaCha20Poly1305, key)
	data := []byte("the quick brown fox jumps over the lazy dog, twice over")
	var stream []byte
	stream = seal.Seal(stream, 0, frame.Data, data[:20], 0)
	stream = seal.Seal(stream, 1, frame.Keepalive, nil, 0)
	stream = seal.Seal(stream, 2, frame.Data, data[20:], 16)
	stream = seal.Seal(stream, 3, frame.CloseWrite, nil, 0)
	f.Add(stream, uint16(0), byte(0), uint16(0))
	f.Add(stream, uint16(5), byte(1), uint16(7))
	f.Add(stream[:30], uint16(0), byte(0), uint16(100))
	f.Add([]byte{1, 0xff, 0xff, 0xff}, uint16(0), byte(0), uint16(0))
	f.Fuzz(func(t *testing.T, base []byte, at uint16, flip byte, readSize uint16) {
		input := append([]byte(nil), base...)
		if len(input) > 0 {
			input[int(at)%len(input)] ^= flip
		}
		a, b := net.Pipe()
		defer a.Close()
		go func() {
			b.Write(input)
			b.Close()
		}()
		c := Server(a, &Config{Keys: []*Key{{psk: [32]byte{1}}}})
		s, _ := c.config.settings()
		if err := c.install(s, &handshakeResult{
			suite: aead.ChaCha20Poly1305, sendLimit: s.maxPayload,
			sendKey: make([]byte, 32), recvKey: append([]byte(nil), key...),
		}); err != nil {
			t.Fatal(err)
		}
		c.hsDone.Store(true)
		// Small reads take the in-place path, large ones decrypt straight
		// into the caller's buffer.
		var got []byte
		buf := make([]byte, 1+int(readSize)%100)
		var err error
		for {
			var n int
			n, err = c.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		if err == io.EOF {
			err = nil
		}
		if !bytes.HasPrefix(data, got) {
			t.Fatalf("delivered bytes that were never sent: %q", got)
		}
		if err == nil && !bytes.Equal(got, data) {
			t.Fatalf("clean end after %d of %d bytes", len(got), len(data))
		}
	})
}
