package spipe

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// choppyConn returns at most a random number of bytes from each Read, the
// way TCP hands over whatever has arrived.
type choppyConn struct {
	net.Conn
	rnd *rand.Rand
}

func (c *choppyConn) Read(p []byte) (int, error) {
	return c.Conn.Read(p[:1+c.rnd.IntN(len(p))])
}

// TestReaderBufferAcrossFrameSizes streams frames of mixed sizes (tiny to
// the largest) to a reader whose transport hands over random amounts and
// which reads with random buffer sizes: wherever frames start and end in
// the read buffer, and whatever was read ahead, every byte arrives in
// order.
func TestReaderBufferAcrossFrameSizes(t *testing.T) {
	for seed := range uint64(4) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		k := newTestKey(t)
		cfg := &Config{Keys: []*Key{k}}
		a, b := pipePair(t)
		if seed%2 == 1 {
			a, b = testutil.TCPPair(t)
		}
		cli, srv, cerr, serr := handshakePair(t, a, &choppyConn{Conn: b, rnd: rand.New(rand.NewPCG(seed, 2))}, cfg, cfg)
		require.NoError(t, cerr)
		require.NoError(t, serr)

		var writes [][]byte
		total := 0
		for total < 3<<20 {
			var n int
			switch rnd.IntN(4) {
			case 0:
				n = 1 + rnd.IntN(100)
			case 1:
				n = 1000 + rnd.IntN(5000)
			case 2:
				n = DefaultMaxPayload - 50 + rnd.IntN(100) // one frame or just over
			default:
				n = 2*DefaultMaxPayload + rnd.IntN(DefaultMaxPayload)
			}
			writes = append(writes, randomBytes(t, n))
			total += n
		}
		sent := make(chan error, 1)
		go func() {
			for _, w := range writes {
				if _, err := cli.Write(w); err != nil {
					sent <- err
					return
				}
			}
			sent <- cli.CloseWrite()
		}()
		var got bytes.Buffer
		sizes := []int{1, 7, 100, 4096, DefaultMaxPayload, 200 << 10}
		buf := make([]byte, 200<<10)
		var err error
		for err == nil {
			var n int
			n, err = srv.Read(buf[:sizes[rnd.IntN(len(sizes))]])
			got.Write(buf[:n])
		}
		assert.ErrorIs(t, err, io.EOF, "seed %d", seed)
		require.NoError(t, <-sent)
		assert.True(t, bytes.Equal(bytes.Join(writes, nil), got.Bytes()), "seed %d: %d bytes sent, %d received", seed, total, got.Len())
	}
}
