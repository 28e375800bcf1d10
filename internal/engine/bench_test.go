package engine

import (
	"context"
	"io"
	"net"
	"testing"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// BenchmarkForward measures one connection through a listening forwarder
// with the real protocol: a spipe client writes 64 KiB chunks over
// loopback TCP, the forwarder decrypts and copies them to a sink target.
func BenchmarkForward(b *testing.B) {
	key, err := spipe.NewKey(make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	cfg := &spipe.Config{Keys: []*spipe.Key{key}}
	sinkLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer sinkLn.Close()
	sunk := make(chan int64, 1)
	go func() {
		c, err := sinkLn.Accept()
		if err != nil {
			return
		}
		n, _ := io.Copy(io.Discard, c)
		c.(*net.TCPConn).CloseWrite()
		c.Close()
		sunk <- n
	}()
	td := &TargetDialer{Target: Addr{Network: "tcp", Address: sinkLn.Addr().String()}}
	f := &Forwarder{
		SecureSide: SecureInbound,
		Secure: func(ctx context.Context, c net.Conn) (Conn, error) {
			sc := spipe.Server(c, cfg)
			return sc, sc.HandshakeContext(ctx)
		},
		Dial: td.Dial,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.Serve(ctx, ln) }()

	c, err := spipe.Dial("tcp", ln.Addr().String(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.CloseWrite(); err != nil {
		b.Fatal(err)
	}
	if n := <-sunk; n != int64(b.N)*int64(len(chunk)) {
		b.Fatalf("sink got %d bytes, want %d", n, int64(b.N)*int64(len(chunk)))
	}
	b.StopTimer()
	c.Close()
	cancel()
	<-served
}
