package mux

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"

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
