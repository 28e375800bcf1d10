package mux

import (
	"bytes"
	"context"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// frameSizes records the sizes of the frames written to a connection,
// from their cleartext headers.
type frameSizes struct {
	net.Conn
	mu    sync.Mutex
	need  int // bytes of the current frame still to come
	hdr   []byte
	sizes []int
}

func (f *frameSizes) Write(p []byte) (int, error) {
	f.mu.Lock()
	for q := p; len(q) > 0; {
		if f.need > 0 {
			k := min(f.need, len(q))
			f.need -= k
			q = q[k:]
			continue
		}
		k := min(3-len(f.hdr), len(q))
		f.hdr = append(f.hdr, q[:k]...)
		q = q[k:]
		if len(f.hdr) == 3 {
			n := int(f.hdr[0])<<16 | int(f.hdr[1])<<8 | int(f.hdr[2])
			f.sizes = append(f.sizes, n)
			f.need, f.hdr = n+16, f.hdr[:0]
		}
	}
	f.mu.Unlock()
	return f.Conn.Write(p)
}

// reset forgets what was written so far: the handshake's messages, which
// are not frames, so that the count starts at the first frame.
func (f *frameSizes) reset() {
	f.mu.Lock()
	f.need, f.hdr, f.sizes = 0, f.hdr[:0], nil
	f.mu.Unlock()
}

func (f *frameSizes) get() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.sizes...)
}

// bulkPair is a client and server session over loopback TCP whose
// carriers allow 1 MiB frames, as the spipe tool's do; the client's
// writes are recorded by frame size.
func bulkPair(tb testing.TB) (cli, srv *Session, sizes *frameSizes) {
	a, b := testutil.TCPPair(tb)
	sizes = &frameSizes{Conn: a}
	key, err := spipe.NewKey([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		tb.Fatal(err)
	}
	cfg := &spipe.Config{Keys: []*spipe.Key{key}, Multiplex: true, MaxPayload: spipe.MaxPayloadLimit}
	var wg sync.WaitGroup
	var serr error
	wg.Add(1)
	go func() { defer wg.Done(); srv, serr = Server(spipe.Server(b, cfg), nil) }()
	cli, err = Client(spipe.Client(sizes, cfg), nil)
	wg.Wait()
	if err != nil || serr != nil {
		tb.Fatal(err, serr)
	}
	sizes.reset() // the client's handshake is over: frames from here
	tb.Cleanup(func() { cli.Close(); srv.Close() })
	return cli, srv, sizes
}

// zeros is a bulk source: n bytes, read in whatever pieces are asked.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), z.n))
	z.n -= int64(k)
	return k, nil
}

func BenchmarkStreamBulk(b *testing.B) {
	cli, srv, _ := bulkPair(b)
	const chunk = 64 << 20
	b.SetBytes(chunk)
	b.ReportAllocs()
	for range b.N {
		c, err := cli.Open(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan int64)
		go func() {
			s, err := srv.Accept()
			if err != nil {
				b.Error(err)
				close(done)
				return
			}
			n, _ := s.(*Stream).WriteTo(io.Discard)
			s.Close()
			done <- n
		}()
		if _, err := c.(*Stream).ReadFrom(&zeros{chunk}); err != nil {
			b.Fatal(err)
		}
		c.(*Stream).CloseWrite()
		if n := <-done; n != chunk {
			b.Fatalf("%d of %d bytes", n, chunk)
		}
		c.Close()
	}
}

// TestBulkUsesLargeFrames: a bulk source copied into a stream alone on
// its session goes in large frames, as a plain connection's would: most
// of its bytes in frames over 512 KiB.
func TestBulkUsesLargeFrames(t *testing.T) {
	cli, srv, sizes := bulkPair(t)
	const total = 48 << 20
	sendBulk(t, cli, srv, total)
	assertLargeFrames(t, sizes.get(), total)
}

// TestBulkAfterAnEndedStream: a bulk stream that starts once the stream
// before it has ended is alone on its session at once, so it too goes in
// large frames. (A stream that follows another counted as sharing the
// session for 100 ms: frames of 16 KiB and a window of 64 KiB, a tenth
// of the next second's bulk.)
func TestBulkAfterAnEndedStream(t *testing.T) {
	cli, srv, sizes := bulkPair(t)
	sendBulk(t, cli, srv, 1<<20)
	before := len(sizes.get())
	const total = 48 << 20
	sendBulk(t, cli, srv, total)
	assertLargeFrames(t, sizes.get()[before:], total)
}

// sendBulk copies total bytes through a new stream of cli into one srv
// accepts, ends it both ways, and checks that they all arrived.
func sendBulk(t *testing.T, cli, srv *Session, total int) {
	t.Helper()
	c, err := cli.Open(context.Background())
	require.NoError(t, err)
	defer c.Close()
	done := make(chan int64)
	go func() {
		s, err := srv.Accept()
		if err != nil {
			close(done)
			return
		}
		n, _ := s.(*Stream).WriteTo(io.Discard)
		s.(*Stream).CloseWrite()
		done <- n
	}()
	n, err := c.(*Stream).ReadFrom(bytes.NewReader(make([]byte, total)))
	require.NoError(t, err)
	require.Equal(t, int64(total), n)
	require.NoError(t, c.(*Stream).CloseWrite())
	require.Equal(t, int64(total), <-done)
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF)
}

// assertLargeFrames checks that most of total bytes went in frames over
// 512 KiB.
func assertLargeFrames(t *testing.T, sizes []int, total int) {
	t.Helper()
	large := 0
	for _, n := range sizes {
		if n > 512<<10 {
			large += n
		}
	}
	assert.Greater(t, large, total*9/10, "bytes in large frames, of %d (frame sizes %v)", total, sizes)
}

// TestNoAllocationPerFrame: once a stream runs, a small write and its
// delivery allocate nothing, and neither do a credit's round trip nor the
// read loop's work for them.
func TestNoAllocationPerFrame(t *testing.T) {
	cli, srv, _ := bulkPair(t)
	c, err := cli.Open(context.Background())
	require.NoError(t, err)
	msg, back := make([]byte, 64), make([]byte, 64)
	_, err = c.Write(msg)
	require.NoError(t, err)
	s, err := srv.Accept()
	require.NoError(t, err)
	roundTrip := func() {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(s, back); err != nil {
			t.Fatal(err)
		}
	}
	_, err = io.ReadFull(s, back)
	require.NoError(t, err)
	for range 5000 { // past the credits' first rounds and the pools' filling
		roundTrip()
	}
	limit := 0.05
	if raceEnabled {
		limit = 2 // the frame buffer and the ring's, when the pool dropped them
	}
	assert.Less(t, testing.AllocsPerRun(2000, roundTrip), limit, "allocations per frame")
}
