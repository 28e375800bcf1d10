package engine

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// BenchmarkConnection measures what one short connection costs a
// forwarding pair shaped like "spipe connect" in front of "spipe listen"
// in front of an echo target, all in this process on loopback TCP: the
// client connects, sends one byte, reads it back and closes, one at a
// time. "relay" hands connections through without a handshake (the
// plaintext relay pair of make bench-pipe); "spipe" runs the protocol
// without forward secrecy, whose extra cost over relay is the handshake;
// "mux" carries each connection as a stream of one carrier opened before
// the timing starts ("spipe connect --mux").
// Besides ns/op it reports the whole process's CPU time per connection
// (cpu-us/conn), which is what bounds connections per second when the
// machine is shared.
func BenchmarkConnection(b *testing.B) {
	key, err := spipe.NewKey(make([]byte, 32))
	if err != nil {
		b.Fatal(err)
	}
	cfg := &spipe.Config{Keys: []*spipe.Key{key}, ForwardSecrecy: spipe.ForwardSecrecyOff}
	muxCfg := *cfg
	muxCfg.Multiplex = true
	protocols := []struct {
		name              string
		outbound, inbound func(ctx context.Context, c net.Conn) (Conn, error)
		firstMessage      int // what "spipe listen" watches for: its ClientHello
		mux               *Mux
	}{
		{"relay", plainSecure, plainSecure, 0, nil},
		{"spipe", func(ctx context.Context, c net.Conn) (Conn, error) {
			sc := spipe.Client(c, cfg)
			return sc, sc.HandshakeContext(ctx)
		}, func(ctx context.Context, c net.Conn) (Conn, error) {
			sc := spipe.Server(c, cfg)
			return sc, sc.HandshakeContext(ctx)
		}, 107, nil},
		{"mux", func(ctx context.Context, c net.Conn) (Conn, error) {
			return muxSecured(ctx, spipe.Client(c, &muxCfg), mux.Client)
		}, func(ctx context.Context, c net.Conn) (Conn, error) {
			return muxSecured(ctx, spipe.Server(c, &muxCfg), mux.Server)
		}, 107, &Mux{}},
	}
	for _, p := range protocols {
		b.Run(p.name, func(b *testing.B) {
			target := echoServer(b)
			// Logging as the tool does with --log-level error.
			log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))
			inner := serveBench(b, &Forwarder{SecureSide: SecureInbound, Secure: p.inbound, Log: log,
				FirstMessageSize: p.firstMessage,
				Dial:             (&TargetDialer{Target: Addr{Network: "tcp", Address: target}}).Dial})
			outer := serveBench(b, &Forwarder{SecureSide: SecureOutbound, Secure: p.outbound, Log: log, Mux: p.mux,
				Dial: (&TargetDialer{Target: Addr{Network: "tcp", Address: inner}}).Dial})
			if err := echoOnce(outer); err != nil { // the carrier is up
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu, _ := testutil.ProcessCPUTime()
			for b.Loop() {
				if err := echoOnce(outer); err != nil {
					b.Fatal(err)
				}
			}
			if now, ok := testutil.ProcessCPUTime(); ok && now > cpu {
				b.ReportMetric(float64((now-cpu).Microseconds())/float64(b.N), "cpu-us/conn")
			}
		})
	}
}

// muxSecured runs sc's handshake and starts a session of the multiplexed
// mode on it, as the tool does.
func muxSecured(ctx context.Context, sc *spipe.Conn, session func(*spipe.Conn, *mux.Config) (*mux.Session, error)) (Conn, error) {
	if err := sc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	s, err := session(sc, nil)
	if err != nil {
		return nil, err
	}
	return &Secured{Carrier: s}, nil
}

// serveBench runs f on a fresh loopback listener until the benchmark ends
// and returns its address.
func serveBench(b *testing.B, f *Forwarder) string {
	ln := listenTCP(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Serve(ctx, ln) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	return ln.Addr().String()
}

// echoOnce is one short connection: connect, one byte each way, close.
func echoOnce(addr string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte{42}); err != nil {
		return err
	}
	var r [1]byte
	_, err = io.ReadFull(c, r[:])
	return err
}
