package faultproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

const (
	chunk  = 1000 // one Write, so one frame
	chunks = 6    // data frames 0..5, close-write is frame 6
)

// end is what one side of a pair saw: the bytes it read and how reading
// ended (nil after a clean, authenticated end).
type end struct {
	got     []byte
	readErr error
	hsErr   error
}

// runPair runs a spipe client and server through a proxy applying faults
// to its first connection. Each side writes chunks frames of chunk bytes,
// then closes its write half, while reading everything the other sends.
func runPair(t *testing.T, faults ...Fault) (sent [2][]byte, cli, srv end, p *Proxy) {
	t.Helper()
	key, err := spipe.NewKey(bytes.Repeat([]byte{7}, 32))
	require.NoError(t, err)
	cfg := &spipe.Config{Keys: []*spipe.Key{key}, HandshakeTimeout: 5 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	p, err = Start(ln.Addr().String(), func(int) []Fault { return faults })
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	for i := range sent {
		sent[i] = make([]byte, chunk*chunks)
		rand.Read(sent[i])
	}

	srvDone := make(chan end, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			srvDone <- end{hsErr: err}
			return
		}
		srvDone <- talk(spipe.Server(raw, cfg), sent[1])
	}()
	raw, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	cli = talk(spipe.Client(raw, cfg), sent[0])
	select {
	case srv = <-srvDone:
	case <-time.After(20 * time.Second):
		t.Fatal("server side hung")
	}
	// Whatever happened, neither side may have read a byte the other did
	// not send, in order.
	assert.True(t, bytes.HasPrefix(sent[0], srv.got), "server read bytes the client never sent")
	assert.True(t, bytes.HasPrefix(sent[1], cli.got), "client read bytes the server never sent")
	return sent, cli, srv, p
}

// talk handshakes, then writes data frame by frame while reading until
// the stream ends; it closes c once both are done.
func talk(c *spipe.Conn, data []byte) end {
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.HandshakeContext(ctx); err != nil {
		return end{hsErr: err}
	}
	_ = c.SetDeadline(time.Now().Add(15 * time.Second))
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 0; i < len(data); i += chunk {
			if _, err := c.Write(data[i : i+chunk]); err != nil {
				return
			}
		}
		_ = c.CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		c.Close() // unblocks a writer the peer no longer reads
	}
	<-wrote
	return end{got: got, readErr: err}
}

func TestFaults(t *testing.T) {
	all := chunk * chunks
	cases := []struct {
		name  string
		fault Fault
		// the receiving side's read error (nil: intact) and how many bytes
		// it must have read before it
		want error
		read int
		// or is also right: after an RST, Linux reports ECONNRESET to
		// the first read or write on the socket only, so a receiver whose
		// own write met it first reads a plain end of stream, which spipe
		// reports as truncation.
		or error
	}{
		{"flip payload bit", Fault{Kind: FlipBit, Frame: 2, Bit: 8 * 100}, spipe.ErrTampered, 2 * chunk, nil},
		{"flip tag bit", Fault{Kind: FlipBit, Frame: 2, Bit: -1}, spipe.ErrTampered, 2 * chunk, nil},
		{"flip low length bit", Fault{Kind: FlipBit, Frame: 2, Bit: 2*8 + 0}, spipe.ErrTampered, 2 * chunk, nil},
		{"oversize length", Fault{Kind: FlipBit, Frame: 2, Bit: 0}, spipe.ErrFrameTooLarge, 2 * chunk, nil},
		{"drop", Fault{Kind: Drop, Frame: 2}, spipe.ErrTampered, 2 * chunk, nil},
		{"duplicate", Fault{Kind: Duplicate, Frame: 2}, spipe.ErrTampered, 3 * chunk, nil},
		{"reorder", Fault{Kind: Reorder, Frame: 2}, spipe.ErrTampered, 2 * chunk, nil},
		{"truncate mid-frame", Fault{Kind: Truncate, Frame: 2, Keep: 10}, spipe.ErrTruncated, 2 * chunk, nil},
		{"truncate at boundary", Fault{Kind: Truncate, Frame: 2}, spipe.ErrTruncated, 2 * chunk, nil},
		{"drop close-write", Fault{Kind: Drop, Frame: chunks}, spipe.ErrTruncated, all, nil},
		{"truncate close-write", Fault{Kind: Truncate, Frame: chunks, Keep: 5}, spipe.ErrTruncated, all, nil},
		{"reset", Fault{Kind: Reset, Frame: 2}, syscall.ECONNRESET, 2 * chunk, spipe.ErrTruncated},
		{"delay", Fault{Kind: Delay, Frame: 2, Delay: 200 * time.Millisecond}, nil, all, nil},
	}
	for _, tc := range cases {
		for _, d := range []Direction{ClientToServer, ServerToClient} {
			t.Run(tc.name+" "+d.String(), func(t *testing.T) {
				f := tc.fault
				f.Dir = d
				start := time.Now()
				_, cli, srv, p := runPair(t, f)
				recv := srv
				if d == ServerToClient {
					recv = cli
				}
				require.NoError(t, cli.hsErr)
				require.NoError(t, srv.hsErr)
				switch {
				case tc.want == nil:
					assert.NoError(t, recv.readErr)
				case tc.or != nil && errors.Is(recv.readErr, tc.or):
				default:
					assert.ErrorIs(t, recv.readErr, tc.want)
				}
				assert.Len(t, recv.got, tc.read)
				assert.Equal(t, []Applied{{Conn: 0, Fault: f}}, p.Applied())
				if f.Kind == Delay {
					assert.GreaterOrEqual(t, time.Since(start), f.Delay)
				}
			})
		}
	}
}

func TestHandshakeFaults(t *testing.T) {
	cases := []struct {
		name   string
		fault  Fault
		server bool // the failure is the server's (else the client's)
		want   error
	}{
		{"flip ClientHello MAC", Fault{Kind: FlipBit, Dir: ClientToServer, Handshake: true, Bit: -1}, true, spipe.ErrAuthentication},
		{"flip ClientHello nonce", Fault{Kind: FlipBit, Dir: ClientToServer, Handshake: true, Bit: 8 * 20}, true, spipe.ErrAuthentication},
		{"flip ClientHello version", Fault{Kind: FlipBit, Dir: ClientToServer, Handshake: true, Bit: 1}, true, spipe.ErrVersion},
		{"flip ClientFinished", Fault{Kind: FlipBit, Dir: ClientToServer, Handshake: true, Frame: 1, Bit: 8 * 10}, true, spipe.ErrAuthentication},
		{"flip ServerHello suite", Fault{Kind: FlipBit, Dir: ServerToClient, Handshake: true, Bit: 8 * 4}, false, spipe.ErrAuthentication},
		{"truncate ServerHello", Fault{Kind: Truncate, Dir: ServerToClient, Handshake: true, Keep: 50}, false, spipe.ErrTruncated},
		{"reset at ClientFinished", Fault{Kind: Reset, Dir: ClientToServer, Handshake: true, Frame: 1}, true, syscall.ECONNRESET},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, cli, srv, p := runPair(t, tc.fault)
			failed := cli
			if tc.server {
				failed = srv
			}
			assert.ErrorIs(t, failed.hsErr, tc.want)
			assert.Empty(t, srv.got)
			assert.Empty(t, cli.got)
			assert.Equal(t, []Applied{{Conn: 0, Fault: tc.fault}}, p.Applied())
		})
	}
}

// TestPassThrough: with no faults the proxy is invisible, for several
// connections at once.
func TestPassThrough(t *testing.T) {
	for range 3 {
		sent, cli, srv, p := runPair(t)
		require.NoError(t, cli.readErr)
		require.NoError(t, srv.readErr)
		assert.Equal(t, sent[0], srv.got)
		assert.Equal(t, sent[1], cli.got)
		assert.Empty(t, p.Applied())
	}
}

// TestOversizeHeaderPassesRaw: a header announcing more than the protocol
// allows is not buffered by the proxy; the bytes go through as they came.
func TestOversizeHeaderPassesRaw(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	p, err := Start(ln.Addr().String(), nil)
	require.NoError(t, err)
	defer p.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	msg := make([]byte, helloSize+finishedSize)
	msg = append(msg, 1, 0xff, 0xff, 0xff, 'x', 'y')
	_, err = c.Write(msg)
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	select {
	case b := <-got:
		assert.Equal(t, msg, b)
	case <-time.After(10 * time.Second):
		t.Fatal("proxy held the bytes")
	}
	c.Close()
}

func TestFaultString(t *testing.T) {
	assert.Equal(t, "flip-bit c2s frame 3 bit 9", Fault{Kind: FlipBit, Frame: 3, Bit: 9}.String())
	assert.Equal(t, "truncate s2c handshake message 0 keep 5",
		Fault{Kind: Truncate, Dir: ServerToClient, Handshake: true, Keep: 5}.String())
}
