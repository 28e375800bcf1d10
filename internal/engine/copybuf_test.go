package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readSizes is a plaintext connection that records the largest buffer a
// copy handed its Read.
type readSizes struct {
	Conn
	mu      *sync.Mutex
	largest *int
}

func (c readSizes) Read(p []byte) (int, error) {
	c.mu.Lock()
	*c.largest = max(*c.largest, len(p))
	c.mu.Unlock()
	return c.Conn.Read(p)
}

// TestPlainCopyBuffer: a relay copies through a buffer of
// PlainCopyBuffer bytes when it is set, and of 64 KiB when not, and the
// data arrives intact either way.
func TestPlainCopyBuffer(t *testing.T) {
	target := echoServer(t)
	for _, size := range []int{0, 1 << 20} {
		var mu sync.Mutex
		largest := 0
		f := newForwarder(target)
		f.PlainCopyBuffer = size
		f.Secure = func(_ context.Context, c net.Conn) (Conn, error) {
			return readSizes{Conn: c.(Conn), mu: &mu, largest: &largest}, nil
		}
		ln := listenTCP(t)
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- f.Serve(ctx, ln) }()

		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		msg := make([]byte, 4<<20)
		_, _ = rand.Read(msg)
		go func() { c.Write(msg); c.(*net.TCPConn).CloseWrite() }()
		got, err := io.ReadAll(c)
		c.Close()
		require.NoError(t, err)
		assert.True(t, bytes.Equal(msg, got), "size %d: the echo differs", size)
		cancel()
		require.NoError(t, <-served)

		want := size
		if want == 0 {
			want = bufSize
		}
		mu.Lock()
		assert.Equal(t, want, largest, "size %d: the copy's buffer", size)
		mu.Unlock()
	}
}
