package spipe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// readerOnly hides any WriteTo of the reader it wraps, so io.Copy into a
// Conn takes the Conn's ReadFrom.
type readerOnly struct{ io.Reader }

func TestReadFromRoundTrip(t *testing.T) {
	k := newTestKey(t)
	for _, suite := range aead.Suites() {
		for _, pad := range []int{0, 512} {
			t.Run(fmt.Sprintf("%s/pad=%d", suite, pad), func(t *testing.T) {
				cfg := &Config{Keys: []*Key{k}, Suites: []aead.Suite{suite}, PadTo: pad}
				cli, srv := connected(t, "tcp", cfg, cfg)
				msg := randomBytes(t, 300_000)
				sent := make(chan error, 1)
				go func() {
					n, err := io.Copy(cli, readerOnly{&choppyConnReader{r: bytes.NewReader(msg)}})
					if err == nil && n != int64(len(msg)) {
						err = fmt.Errorf("sent %d of %d bytes", n, len(msg))
					}
					if err == nil {
						err = cli.CloseWrite()
					}
					sent <- err
				}()
				got, err := io.ReadAll(srv)
				require.NoError(t, err)
				require.NoError(t, <-sent)
				assert.True(t, bytes.Equal(msg, got), "%d bytes sent, %d received", len(msg), len(got))
			})
		}
	}
}

// choppyConnReader returns 1, 2, 3, ... bytes, then whole frames' worth,
// from successive Reads, so reads both smaller and larger than a frame
// reach ReadFrom.
type choppyConnReader struct {
	r    io.Reader
	call int
}

func (c *choppyConnReader) Read(p []byte) (int, error) {
	c.call++
	if c.call < 300 {
		p = p[:min(len(p), c.call)]
	}
	return c.r.Read(p)
}

// TestReadFromOneFramePerRead: each read of the source becomes one frame
// of exactly that size on the wire.
func TestReadFromOneFramePerRead(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	cli, srv, sent := payloadPair(t, cfg, cfg)
	sizes := []int{1, 1000, 5000, DefaultMaxPayload - 1} // the last fills a frame: data and type byte
	var chunks []io.Reader
	var all []byte
	for _, n := range sizes {
		b := randomBytes(t, n)
		all = append(all, b...)
		chunks = append(chunks, bytes.NewReader(b))
	}
	go func() {
		// Each chunk is one Read: MultiReader moves to the next reader
		// only on the next call.
		cli.ReadFrom(io.MultiReader(chunks...))
		cli.CloseWrite()
	}()
	got, err := io.ReadAll(srv)
	require.NoError(t, err)
	assert.Equal(t, all, got)
	var payloads []int
	for _, n := range sizes {
		payloads = append(payloads, frame.PayloadSize(n, 0))
	}
	assert.Equal(t, append(payloads, frame.PayloadSize(0, 0)), sent(), "one frame per read, then the close-write")
}

// TestReadFromLeavesOtherWritersFree: while ReadFrom waits for its source,
// Write, SendKeepalive and CloseWrite on other goroutines are not held up,
// and the frames keep their order.
func TestReadFromLeavesOtherWritersFree(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	cli, srv := connected(t, "tcp", cfg, cfg)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	var n int64
	go func() {
		var err error
		n, err = cli.ReadFrom(pr)
		done <- err
	}()
	others := make(chan error, 1)
	go func() {
		if err := cli.SendKeepalive(); err != nil {
			others <- err
			return
		}
		_, err := cli.Write([]byte("a"))
		others <- err
	}()
	select {
	case err := <-others:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Write and SendKeepalive waited for ReadFrom's source")
	}
	buf := make([]byte, 1)
	_, err := io.ReadFull(srv, buf)
	require.NoError(t, err)
	assert.Equal(t, "a", string(buf))

	_, err = pw.Write([]byte("bc"))
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	require.NoError(t, <-done)
	assert.Equal(t, int64(2), n)
	require.NoError(t, cli.CloseWrite())
	rest, err := io.ReadAll(srv)
	require.NoError(t, err)
	assert.Equal(t, "bc", string(rest))
}

func TestReadFromErrors(t *testing.T) {
	k := newTestKey(t)
	cfg := &Config{Keys: []*Key{k}}
	cli, srv := connected(t, "tcp", cfg, cfg)
	boom := errors.New("boom")
	go io.Copy(io.Discard, srv)

	// The source's error comes back with what was sent before it.
	n, err := cli.ReadFrom(io.MultiReader(bytes.NewReader(make([]byte, 10)), &failing{boom}))
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, int64(10), n)

	// After CloseWrite nothing more may be sent.
	require.NoError(t, cli.CloseWrite())
	n, err = cli.ReadFrom(bytes.NewReader([]byte("late")))
	assert.ErrorIs(t, err, errWriteClosed)
	assert.Zero(t, n)
}

type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }
