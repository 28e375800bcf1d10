package spipe

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// The fuzz targets in fuzz_test.go feed bytes that do not hold the key, so
// the fuzzer stops at the first MAC. These two play a peer that holds the
// key: the fuzzer writes the other side's hello body and the harness MACs
// it, so the structure checks and the negotiation behind the MAC are what
// gets explored.

var keyholderPSK = [32]byte{5, 4, 3, 2, 1}

// keyholderIPSK is the key that MACs the keyholder's hellos (no context).
var keyholderIPSK = importKey(&keyholderPSK, "")

// helloSeeds are valid hello bodies of type typ, with and without an
// ephemeral key.
func helloSeeds(f *testing.F, typ byte) {
	s, _ := (&Config{Keys: []*Key{{psk: [32]byte{1}}}}).settings()
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
		f.Add(b[:helloBody], eph)
	}
}

// asBody pads or cuts fuzz input to a hello body.
func asBody(b []byte) []byte {
	body := make([]byte, helloBody)
	copy(body, b)
	return body
}

// FuzzClientHandshakeKeyholder: a client facing a server that holds the
// key and sends an arbitrary (but authentic) ServerHello never panics, and
// either fails with a handshake error or ends up in a state its own
// configuration allows.
func FuzzClientHandshakeKeyholder(f *testing.F) {
	helloSeeds(f, msgServerHello)
	f.Fuzz(func(t *testing.T, in []byte, pfs bool) {
		body := asBody(in)
		cfg := &Config{Keys: []*Key{{psk: keyholderPSK}}, ForwardSecrecy: policy(pfs), HandshakeTimeout: 2 * time.Second}
		a, b := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer b.Close()
			var c1, s1 [helloSize]byte
			if _, err := io.ReadFull(b, c1[:]); err != nil {
				return
			}
			copy(s1[:], body)
			helloMAC(s1[helloBody:], &keyholderIPSK, c1[:], s1[:helloBody])
			if _, err := b.Write(s1[:]); err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, b)
		}()
		c := Client(a, cfg)
		err := c.Handshake()
		c.Close()
		<-done
		if err != nil {
			if !errors.Is(err, ErrMalformedHandshake) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrForwardSecrecyRequired) {
				t.Fatalf("authentic ServerHello %x: unexpected error %v", body, err)
			}
			return
		}
		st := c.ConnectionState()
		s, _ := cfg.settings()
		if suiteMask(s.suites)&(1<<st.Suite) == 0 {
			t.Fatalf("accepted suite %v the client did not offer", st.Suite)
		}
		if st.MaxPayload < minPayload || st.MaxPayload > s.maxPayload {
			t.Fatalf("send limit %d outside [%d, %d]", st.MaxPayload, minPayload, s.maxPayload)
		}
		if st.ForwardSecrecy && !pfs {
			t.Fatal("forward secrecy the client did not ask for")
		}
	})
}

// FuzzServerHandshakeKeyholder: a server facing a client that holds the
// key and sends an arbitrary (but authentic) ClientHello never panics and
// never completes, since no input can carry the ClientFinished for the
// server's fresh nonce; it fails with a handshake error, after answering
// only hellos that pass its checks.
func FuzzServerHandshakeKeyholder(f *testing.F) {
	helloSeeds(f, msgClientHello)
	f.Fuzz(func(t *testing.T, in []byte, requirePFS bool) {
		body := asBody(in)
		fs := ForwardSecrecyPreferred
		if requirePFS {
			fs = ForwardSecrecyRequired
		}
		cfg := &Config{Keys: []*Key{{psk: [32]byte{9}}, {psk: keyholderPSK}}, ForwardSecrecy: fs,
			HandshakeTimeout: 2 * time.Second}
		a, b := net.Pipe()
		answered := make(chan bool, 1)
		go func() {
			defer b.Close()
			var c1 [helloSize]byte
			copy(c1[:], body)
			helloMAC(c1[helloBody:], &keyholderIPSK, nil, c1[:helloBody])
			if _, err := b.Write(c1[:]); err != nil {
				answered <- false
				return
			}
			var s1 [helloSize]byte
			if _, err := io.ReadFull(b, s1[:]); err != nil {
				answered <- false
				return
			}
			answered <- true
			fin := make([]byte, finishedLen) // well formed, but its MAC cannot be right
			fin[0], fin[1] = Version, msgClientFinished
			_, _ = b.Write(fin)
		}()
		c := Server(a, cfg)
		err := c.Handshake()
		c.Close()
		ok := <-answered
		if err == nil {
			t.Fatalf("handshake completed for ClientHello %x", body)
		}
		if ok && !errors.Is(err, ErrAuthentication) {
			t.Fatalf("after its ServerHello the server failed with %v, want an authentication failure", err)
		}
		if !ok && !errors.Is(err, ErrMalformedHandshake) && !errors.Is(err, ErrVersion) &&
			!errors.Is(err, ErrNoSharedSuite) && !errors.Is(err, ErrForwardSecrecyRequired) &&
			!errors.Is(err, ErrUnsupportedMode) {
			t.Fatalf("server refused ClientHello %x with %v", body, err)
		}
	})
}

// FuzzFrameReaderKeyholder: frames sealed under the session key (so they
// pass the tag) with arbitrary inner plaintexts. The reader must deliver
// exactly what the protocol says those frames carry (section 4: the type is
// the last non-zero byte, the data everything before it) and stop with
// ErrMalformedFrame, io.EOF or ErrTruncated where the protocol says so.
// The input is a list of (length, inner plaintext) records.
func FuzzFrameReaderKeyholder(f *testing.F) {
	f.Add([]byte{4, 'a', 'b', 'c', 1, 1, 2}, uint16(7))
	f.Add([]byte{6, 'h', 'i', 0, 1, 0, 0, 1, 2}, uint16(1))
	f.Add([]byte{2, 0, 0}, uint16(100))
	f.Add([]byte{2, 'x', 4}, uint16(3))
	f.Add([]byte{2, 'x', 3}, uint16(3))
	f.Add([]byte{1, 3, 3, 0, 0, 1, 'x'}, uint16(3))
	f.Fuzz(func(t *testing.T, records []byte, readSize uint16) {
		key := bytes.Repeat([]byte{0x42}, 32)
		// The stream, and what the protocol says a reader gets from it.
		var stream, want []byte
		var wantErr error = ErrTruncated
		decided := false
		for i := uint64(0); len(records) >= 1; i++ {
			n := min(int(records[0]), len(records)-1)
			inner := records[1 : 1+n]
			records = records[1+n:]
			stream = append(stream, sealInner(t, aead.ChaCha20Poly1305, key, i, inner)...)
			if decided {
				continue
			}
			end := len(inner)
			for end > 0 && inner[end-1] == 0 {
				end--
			}
			if end == 0 {
				wantErr, decided = ErrMalformedFrame, true
				continue
			}
			switch typ, data := frame.Type(inner[end-1]), inner[:end-1]; {
			case typ == frame.Data:
				want = append(want, data...)
			case (typ == frame.CloseWrite || typ == frame.Keepalive) && len(data) > 0:
				wantErr, decided = ErrMalformedFrame, true
			case typ == frame.CloseWrite:
				wantErr, decided = io.EOF, true
			case typ == frame.Keepalive:
			default:
				wantErr, decided = ErrMalformedFrame, true
			}
		}

		a, b := net.Pipe()
		defer a.Close()
		go func() {
			b.Write(stream)
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
		var got []byte
		var err error
		buf := make([]byte, 1+int(readSize)%300)
		for {
			var n int
			n, err = c.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("read %q, the frames carry %q", got, want)
		}
		if !errors.Is(err, wantErr) {
			t.Fatalf("read ended with %v, want %v", err, wantErr)
		}
	})
}
