package spipe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// writerOnly hides any ReadFrom of the writer it wraps, and records the
// size of every Write.
type writerOnly struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes []int
}

func (w *writerOnly) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, len(p))
	return w.buf.Write(p)
}

func TestWriteToRoundTrip(t *testing.T) {
	k := newTestKey(t)
	for _, suite := range aead.Suites() {
		for _, pad := range []int{0, 512} {
			for _, maxPayload := range []int{DefaultMaxPayload, MaxPayloadLimit} {
				t.Run(fmt.Sprintf("%s/pad=%d/max=%d", suite, pad, maxPayload), func(t *testing.T) {
					cfg := &Config{Keys: []*Key{k}, Suites: []aead.Suite{suite}, PadTo: pad, MaxPayload: maxPayload}
					cli, srv := connected(t, "tcp", cfg, cfg)
					var msg []byte
					sent := make(chan error, 1)
					chunks := [][]byte{randomBytes(t, 1), randomBytes(t, 70_000), randomBytes(t, 2<<20), randomBytes(t, 300)}
					for _, c := range chunks {
						msg = append(msg, c...)
					}
					go func() {
						for _, c := range chunks {
							if _, err := cli.Write(c); err != nil {
								sent <- err
								return
							}
						}
						sent <- cli.CloseWrite()
					}()
					w := &writerOnly{}
					n, err := io.Copy(w, srv) // takes WriteTo
					require.NoError(t, err)
					require.NoError(t, <-sent)
					assert.Equal(t, int64(len(msg)), n)
					assert.True(t, bytes.Equal(msg, w.buf.Bytes()), "%d bytes sent, %d received", len(msg), w.buf.Len())
				})
			}
		}
	}
}

// TestWriteToOneWritePerFrame: each data frame reaches the writer as one
// write of its data, whatever its size; control frames write nothing.
func TestWriteToOneWritePerFrame(t *testing.T) {
	cfg := bigConfig(newTestKey(t))
	cli, srv := connected(t, "tcp", cfg, cfg)
	sizes := []int{1, 1000, 70_000, MaxPayloadLimit - 1}
	go func() {
		for _, n := range sizes {
			cli.Write(make([]byte, n))
			cli.SendKeepalive()
		}
		cli.CloseWrite()
	}()
	w := &writerOnly{}
	_, err := srv.WriteTo(w)
	require.NoError(t, err)
	assert.Equal(t, sizes, w.writes)
}

// TestWriteToAfterRead: data a Read left behind (its buffer was smaller
// than the frame) is written first.
func TestWriteToAfterRead(t *testing.T) {
	cfg := bigConfig(newTestKey(t))
	cli, srv := connected(t, "tcp", cfg, cfg)
	msg := randomBytes(t, 500_000)
	go func() {
		cli.Write(msg)
		cli.CloseWrite()
	}()
	head := make([]byte, 10)
	_, err := io.ReadFull(srv, head)
	require.NoError(t, err)
	w := &writerOnly{}
	n, err := srv.WriteTo(w)
	require.NoError(t, err)
	assert.Equal(t, int64(len(msg)-len(head)), n)
	assert.Equal(t, msg, append(head, w.buf.Bytes()...))
}

// failingWriter accepts limit bytes, then fails with err (or, with err
// nil, takes part of a write and reports no error).
type failingWriter struct {
	limit int
	err   error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) <= f.limit {
		f.limit -= len(p)
		return len(p), nil
	}
	n := f.limit
	f.limit = 0
	return n, f.err
}

func TestWriteToWriterErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		w    io.Writer
		want error
	}{
		{"error", &failingWriter{limit: 150, err: boom}, boom},
		{"short write", &failingWriter{limit: 150}, io.ErrShortWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &Config{Keys: []*Key{newTestKey(t)}}
			cli, srv := connected(t, "tcp", cfg, cfg)
			go func() {
				cli.Write(make([]byte, 100))
				cli.Write(make([]byte, 100))
			}()
			n, err := srv.WriteTo(tc.w)
			assert.ErrorIs(t, err, tc.want)
			assert.Equal(t, int64(150), n, "what the writer took")
		})
	}
}

// TestWriteToTamperedFrame: a frame that fails its tag ends WriteTo with
// ErrTampered, and not one byte of it reaches the writer, however large.
func TestWriteToTamperedFrame(t *testing.T) {
	cfg := bigConfig(newTestKey(t))
	var good []byte
	cli, srv := proxyPair(t, cfg, cfg, func(d dir, i int, u []byte) ([][]byte, bool) {
		if d == c2s && i == frameUnit(1) {
			u[len(u)/2] ^= 1 // the second frame, in the middle of its data
		}
		return nil, false
	})
	cerr, serr := runHandshakes(t, cli, srv)
	require.NoError(t, cerr)
	require.NoError(t, serr)
	good = randomBytes(t, 1000)
	go func() {
		cli.Write(good)
		cli.Write(make([]byte, 900_000))
		cli.CloseWrite()
	}()
	w := &writerOnly{}
	n, err := srv.WriteTo(w)
	assert.ErrorIs(t, err, ErrTampered)
	assert.Equal(t, int64(len(good)), n)
	assert.Equal(t, good, w.buf.Bytes(), "only the authentic frame's data")
}

// TestWriteToTimeout: a read deadline ends WriteTo with a timeout that
// leaves the connection usable; the next WriteTo carries on.
func TestWriteToTimeout(t *testing.T) {
	cfg := &Config{Keys: []*Key{newTestKey(t)}}
	cli, srv := connected(t, "tcp", cfg, cfg)
	_, err := cli.Write([]byte("before"))
	require.NoError(t, err)
	require.NoError(t, srv.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	w := &writerOnly{}
	n, err := srv.WriteTo(w)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	assert.Equal(t, int64(6), n)
	require.NoError(t, srv.SetReadDeadline(time.Time{}))
	go func() {
		cli.Write([]byte(" after"))
		cli.CloseWrite()
	}()
	_, err = srv.WriteTo(w)
	require.NoError(t, err)
	assert.Equal(t, "before after", w.buf.String())
}
