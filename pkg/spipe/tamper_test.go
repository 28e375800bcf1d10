package spipe

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

func tamperConfigs(t testing.TB) (*Config, *Config) {
	k := newTestKey(t)
	return &Config{Keys: []*Key{k}}, &Config{Keys: []*Key{newTestKey(t), k}}
}

// TestHandshakeMessageBitFlips flips bits across each handshake message in
// flight; the receiver must name it (version byte: ErrVersion; anything
// else: ErrAuthentication) and the other side must fail too (or, for a
// flipped ClientFinished, the server must not complete).
func TestHandshakeMessageBitFlips(t *testing.T) {
	ccfg, scfg := tamperConfigs(t)
	type msg struct {
		name   string
		d      dir
		i      int
		size   int
		victim string // who detects it
	}
	for _, m := range []msg{
		{"ClientHello", c2s, 0, helloSize, "server"},
		{"ServerHello", s2c, 0, helloSize, "client"},
		{"ClientFinished", c2s, 1, finishedLen, "server"},
	} {
		bits := []int{0, 1, 7, 8, 9, 15, 16, 23, 24, 31, 32, 40, 47, 48, 55, 63, 79, 80, 335, 336, 591, 592, 847}
		for _, bit := range bits {
			if bit >= m.size*8 {
				continue
			}
			cli, srv := proxyPair(t, ccfg, scfg, onUnit(m.d, m.i, flipBit(bit)))
			cerr, serr := runHandshakes(t, cli, srv)
			victim, other := serr, cerr
			if m.victim == "client" {
				victim, other = cerr, serr
			}
			want := ErrAuthentication
			if bit < 8 {
				want = ErrVersion
			}
			assert.ErrorIs(t, victim, want, "%s bit %d", m.name, bit)
			if m.name != "ClientFinished" {
				assert.ErrorIs(t, other, ErrTruncated, "%s bit %d: the other side", m.name, bit)
			}
		}
	}
}

// TestHandshakeMessageTruncated cuts each handshake message short (and at
// its start); the side waiting for it fails with ErrTruncated.
func TestHandshakeMessageTruncated(t *testing.T) {
	ccfg, scfg := tamperConfigs(t)
	for _, m := range []struct {
		d      dir
		i      int
		size   int
		server bool
	}{{c2s, 0, helloSize, true}, {s2c, 0, helloSize, false}, {c2s, 1, finishedLen, true}} {
		for _, keep := range []int{0, 1, m.size / 2, m.size - 1} {
			cli, srv := proxyPair(t, ccfg, scfg, onUnit(m.d, m.i, func(u []byte) ([][]byte, bool) {
				return [][]byte{u[:keep]}, true
			}))
			cerr, serr := runHandshakes(t, cli, srv)
			if m.server {
				assert.ErrorIs(t, serr, ErrTruncated, "unit %d/%d kept %d", m.d, m.i, keep)
			} else {
				assert.ErrorIs(t, cerr, ErrTruncated, "unit %d/%d kept %d", m.d, m.i, keep)
			}
		}
	}
}

// recordHandshake runs one good handshake through a recorder and returns
// ClientHello, ServerHello and ClientFinished.
func recordHandshake(t *testing.T, ccfg, scfg *Config) (c1, s1, cf []byte) {
	var rec recorder
	cli, srv := proxyPair(t, ccfg, scfg, rec.hook)
	cerr, serr := runHandshakes(t, cli, srv)
	require.NoError(t, cerr)
	require.NoError(t, serr)
	return rec.unit(c2s, 0), rec.unit(s2c, 0), rec.unit(c2s, 1)
}

// attackServer runs a server handshake against script and returns its
// error.
func attackServer(t *testing.T, scfg *Config, script func(c net.Conn)) error {
	return Server(rawPeer(t, script), scfg).Handshake()
}

func attackClient(t *testing.T, ccfg *Config, script func(c net.Conn)) error {
	return Client(rawPeer(t, script), ccfg).Handshake()
}

func TestHandshakeReplayReflectReorder(t *testing.T) {
	ccfg, scfg := tamperConfigs(t)
	c1, s1, cf := recordHandshake(t, ccfg, scfg)
	read := func(c net.Conn, n int) []byte {
		b := make([]byte, n)
		io.ReadFull(c, b)
		return b
	}

	// A whole recorded client replayed: the server's fresh nonce makes the
	// old ClientFinished worthless.
	err := attackServer(t, scfg, func(c net.Conn) {
		c.Write(c1)
		read(c, helloSize)
		c.Write(cf)
	})
	assert.ErrorIs(t, err, ErrAuthentication, "replayed ClientHello+ClientFinished")

	// A replayed ClientHello alone: the server answers but never completes
	// (no live key holder), so its handshake ends at its deadline.
	short := *scfg
	short.HandshakeTimeout = 50 * time.Millisecond
	err = attackServer(t, &short, func(c net.Conn) {
		c.Write(c1)
		read(c, helloSize)
		io.Copy(io.Discard, c)
	})
	assert.ErrorIs(t, err, context.DeadlineExceeded, "replayed ClientHello alone")

	// A recorded ServerHello replayed to a new client.
	err = attackClient(t, ccfg, func(c net.Conn) {
		read(c, helloSize)
		c.Write(s1)
	})
	assert.ErrorIs(t, err, ErrAuthentication, "replayed ServerHello")

	// An old ClientHello spliced into a live session: the server answers it,
	// and the real client rejects a ServerHello that is not about its hello.
	cli, srv := proxyPair(t, ccfg, scfg, onUnit(c2s, 0, func([]byte) ([][]byte, bool) {
		return [][]byte{c1}, false
	}))
	cerr, serr := runHandshakes(t, cli, srv)
	assert.ErrorIs(t, cerr, ErrAuthentication, "spliced ClientHello: client")
	assert.ErrorIs(t, serr, ErrTruncated, "spliced ClientHello: server")

	// An old ClientFinished spliced into a live session.
	cli, srv = proxyPair(t, ccfg, scfg, onUnit(c2s, 1, func([]byte) ([][]byte, bool) {
		return [][]byte{cf}, false
	}))
	_, serr = runHandshakes(t, cli, srv)
	assert.ErrorIs(t, serr, ErrAuthentication, "spliced ClientFinished")

	// Reflection: the client's own hello sent back as the server's.
	err = attackClient(t, ccfg, func(c net.Conn) {
		c.Write(read(c, helloSize))
	})
	assert.ErrorIs(t, err, ErrAuthentication, "reflected ClientHello")

	// Reflection: the server's hello sent back to it as a ClientHello (to a
	// second server) and as a ClientFinished (to itself).
	err = attackServer(t, scfg, func(c net.Conn) { c.Write(s1) })
	assert.ErrorIs(t, err, ErrAuthentication, "ServerHello as ClientHello")
	err = attackServer(t, scfg, func(c net.Conn) {
		c.Write(c1)
		c.Write(read(c, helloSize)[:finishedLen])
	})
	assert.ErrorIs(t, err, ErrAuthentication, "ServerHello reflected as ClientFinished")

	// Reordering: ClientFinished before ClientHello.
	err = attackServer(t, scfg, func(c net.Conn) {
		c.Write(cf)
		c.Write(c1)
	})
	assert.ErrorIs(t, err, ErrAuthentication, "reordered")
}

// frameScenario sends chunks (one frame each) from client to server
// through a proxy applying h to the data frames, then CloseWrite, and
// returns what the server's Read delivered and its final error. The server
// reads with a buffer of readSize bytes: large buffers take the path that
// decrypts straight into them, small ones the in-place path.
func frameScenario(t *testing.T, chunks [][]byte, h hook, readSize int) ([]byte, error) {
	ccfg, scfg := tamperConfigs(t)
	cli, srv := proxyPair(t, ccfg, scfg, h)
	cerr, serr := runHandshakes(t, cli, srv)
	require.NoError(t, cerr)
	require.NoError(t, serr)
	go func() {
		for _, c := range chunks {
			if _, err := cli.Write(c); err != nil {
				return
			}
		}
		cli.CloseWrite()
		cli.Close() // as a real peer eventually does: the TCP connection ends
	}()
	var got bytes.Buffer
	buf := make([]byte, readSize)
	for {
		n, err := srv.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			return got.Bytes(), err
		}
	}
}

// frameUnit is the proxy unit index of client frame k.
func frameUnit(k int) int { return 2 + k }

func TestFrameTampering(t *testing.T) {
	var chunks [][]byte
	for i := range 5 {
		chunks = append(chunks, randomBytes(t, 40+i))
	}
	upTo := func(k int) []byte { return bytes.Join(chunks[:k], nil) }
	const k = 2 // the frame attacked

	cases := []struct {
		name  string
		h     hook
		want  error
		valid []byte // the authentic prefix delivered
	}{
		{"untouched", passThrough, io.EOF, upTo(5)},
		{"dropped", onUnit(c2s, frameUnit(k), func([]byte) ([][]byte, bool) { return [][]byte{}, false }), ErrTampered, upTo(k)},
		{"duplicated", onUnit(c2s, frameUnit(k), func(u []byte) ([][]byte, bool) { return [][]byte{u, u}, false }), ErrTampered, upTo(k + 1)},
		{"truncated mid-frame", onUnit(c2s, frameUnit(k), func(u []byte) ([][]byte, bool) { return [][]byte{u[:len(u)/2]}, true }), ErrTruncated, upTo(k)},
		{"truncated in header", onUnit(c2s, frameUnit(k), func(u []byte) ([][]byte, bool) { return [][]byte{u[:2]}, true }), ErrTruncated, upTo(k)},
		{"truncated at boundary", onUnit(c2s, frameUnit(k), func([]byte) ([][]byte, bool) { return nil, true }), ErrTruncated, upTo(k)},
		{"close-write dropped", onUnit(c2s, frameUnit(5), func([]byte) ([][]byte, bool) { return nil, true }), ErrTruncated, upTo(5)},
		{"oversize header", onUnit(c2s, frameUnit(k), func(u []byte) ([][]byte, bool) {
			return [][]byte{{0x01, 0x00, 0x01}}, false // DefaultMaxPayload+1
		}), ErrFrameTooLarge, upTo(k)},
		{"injected", onUnit(c2s, frameUnit(k), func(u []byte) ([][]byte, bool) {
			return [][]byte{append([]byte{0, 0, 4}, randomBytes(t, 4+frame.TagSize)...), u}, false
		}), ErrTampered, upTo(k)},
	}
	// Reordered: frame k held back and sent after k+1.
	var held []byte
	cases = append(cases, struct {
		name  string
		h     hook
		want  error
		valid []byte
	}{"reordered", func(d dir, i int, u []byte) ([][]byte, bool) {
		switch {
		case d == c2s && i == frameUnit(k):
			held = u
			return [][]byte{}, false
		case d == c2s && i == frameUnit(k+1):
			return [][]byte{u, held}, false
		}
		return nil, false
	}, ErrTampered, upTo(k)})

	for _, readSize := range []int{7, 1000} {
		for _, tc := range cases {
			held = nil
			got, err := frameScenario(t, chunks, tc.h, readSize)
			assert.ErrorIs(t, err, tc.want, "%s, reads of %d", tc.name, readSize)
			assert.Equal(t, tc.valid, got, "%s, reads of %d: exactly the authentic prefix is delivered", tc.name, readSize)
		}
	}
}

// TestFrameBitFlips flips bits at every byte of a data frame and of the
// close-write frame in flight. A flipped length byte may instead read as
// too large or cut the stream; everything else is ErrTampered. Only frames
// before the flipped one are delivered.
func TestFrameBitFlips(t *testing.T) {
	chunks := [][]byte{randomBytes(t, 16), randomBytes(t, 16), randomBytes(t, 16)}
	for _, target := range []int{1, 3} { // a data frame; the close-write frame
		n := frame.Overhead + frame.PayloadSize(16, 0)
		if target == 3 {
			n = frame.Overhead + frame.PayloadSize(0, 0)
		}
		for byteIdx := range n {
			bit := byteIdx*8 + byteIdx%8
			got, err := frameScenario(t, chunks, onUnit(c2s, frameUnit(target), flipBit(bit)), 7+byteIdx%2*1000)
			assert.Equal(t, bytes.Join(chunks[:target], nil), got, "frame %d byte %d", target, byteIdx)
			if byteIdx < frame.HeaderSize {
				assert.True(t, errorIsAny(err, ErrTampered, ErrTruncated, ErrFrameTooLarge), "frame %d byte %d: %v", target, byteIdx, err)
			} else {
				assert.ErrorIs(t, err, ErrTampered, "frame %d byte %d", target, byteIdx)
			}
		}
	}
}

// TestFrameFromOtherDirection: a frame the server sent, reflected back to
// it in the client's place, fails (the directions have separate keys).
func TestFrameFromOtherDirection(t *testing.T) {
	ccfg, scfg := tamperConfigs(t)
	reflected := make(chan []byte, 1)
	h := func(d dir, i int, u []byte) ([][]byte, bool) {
		switch {
		case d == s2c && i == 1:
			reflected <- u
		case d == c2s && i == frameUnit(0):
			return [][]byte{<-reflected}, false
		}
		return nil, false
	}
	cli, srv := proxyPair(t, ccfg, scfg, h)
	cerr, serr := runHandshakes(t, cli, srv)
	require.NoError(t, cerr)
	require.NoError(t, serr)
	msg := []byte("same length msg!")
	go srv.Write(msg)
	go cli.Read(make([]byte, 100))
	go cli.Write(msg)
	n, err := srv.Read(make([]byte, 100))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, ErrTampered)
}
