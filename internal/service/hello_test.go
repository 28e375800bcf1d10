package service

import (
	"context"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// TestClientHelloSize: the listener's first-message deadline waits for
// clientHelloSize bytes, which must be exactly what a spipe client sends
// before it waits for the server: more, and every honest client would be
// cut at the deadline; fewer, and a peer could hold its place for the
// whole handshake timeout with a message it never finishes.
func TestClientHelloSize(t *testing.T) {
	material := make([]byte, 32)
	rand.Read(material)
	key, err := spipe.NewKey(material)
	require.NoError(t, err)
	for _, cfg := range []*spipe.Config{
		{Keys: []*spipe.Key{key}},
		{Keys: []*spipe.Key{key}, ForwardSecrecy: spipe.ForwardSecrecyOff},
	} {
		client, server := net.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = spipe.Client(client, cfg).HandshakeContext(ctx) }()
		var sent int
		buf := make([]byte, 512)
		for {
			// net.Pipe has no buffer: the client's write waits for these
			// reads, so a quiet half second means it waits for an answer.
			require.NoError(t, server.SetReadDeadline(time.Now().Add(500*time.Millisecond)))
			n, err := server.Read(buf)
			sent += n
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			require.NoError(t, err)
		}
		assert.Equal(t, clientHelloSize, sent, "bytes a client sends first (forward secrecy policy %d)", cfg.ForwardSecrecy)
		cancel()
		client.Close()
		server.Close()
		<-done
	}
}
