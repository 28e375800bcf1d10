package spipe

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/aead"
)

// BenchmarkThroughput pushes 16 KiB writes through one Conn pair over
// loopback TCP, the reader draining concurrently. allocs/op counts both
// ends' steady state: it must be zero.
func BenchmarkThroughput(b *testing.B) {
	for _, suite := range aead.Suites() {
		b.Run(suite.String(), func(b *testing.B) {
			k := newTestKey(b)
			cfg := &Config{Keys: []*Key{k}, Suites: []aead.Suite{suite}}
			cli, srv := connected(b, "tcp", cfg, cfg)
			buf := make([]byte, 16<<10)
			done, warm := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				rbuf := make([]byte, 32<<10)
				var total int
				for {
					n, err := srv.Read(rbuf)
					if err != nil {
						return
					}
					if total < len(buf) && total+n >= len(buf) {
						close(warm)
					}
					total += n
				}
			}()
			// Warm up: both ends' buffers exist before measuring.
			if _, err := cli.Write(buf); err != nil {
				b.Fatal(err)
			}
			<-warm
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPUTime()
			for range b.N {
				if _, err := cli.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			cli.CloseWrite()
			<-done
			reportCPU(b, processCPUTime()-cpu, len(buf))
		})
	}
}

// BenchmarkHandshake measures complete handshakes (both ends) over
// net.Pipe, with and without forward secrecy; ns/op is the time of one
// handshake, so handshakes per second per core is 1e9/ns_op.
func BenchmarkHandshake(b *testing.B) {
	for _, pfs := range []bool{true, false} {
		name := "pfs"
		if !pfs {
			name = "nopfs"
		}
		b.Run(name, func(b *testing.B) {
			k := newTestKey(b)
			cfg := &Config{Keys: []*Key{k}, ForwardSecrecy: policy(pfs)}
			ctx := context.Background()
			b.ReportAllocs()
			cpu := processCPUTime()
			for range b.N {
				x, y := net.Pipe()
				cli, srv := Client(x, cfg), Server(y, cfg)
				errc := make(chan error, 1)
				go func() { errc <- cli.HandshakeContext(ctx) }()
				if err := srv.HandshakeContext(ctx); err != nil {
					b.Fatal(err)
				}
				if err := <-errc; err != nil {
					b.Fatal(err)
				}
				x.Close()
				y.Close()
			}
			reportCPU(b, processCPUTime()-cpu, 0)
		})
	}
}

// processCPUTime is the process's CPU time so far; zero where it cannot
// be read, which leaves the CPU figures out.
func processCPUTime() time.Duration { d, _ := testutil.ProcessCPUTime(); return d }

// reportCPU adds the process's CPU time per operation (both ends, user and
// system, every thread) and, for transfers, the matching throughput. On
// this shared machine wall time mostly measures waiting for a core; CPU
// time measures the work.
func reportCPU(b *testing.B, cpu time.Duration, bytesPerOp int) {
	if cpu <= 0 || b.N == 0 {
		return
	}
	perOp := float64(cpu.Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp, "cpu-ns/op")
	if bytesPerOp > 0 {
		b.ReportMetric(float64(bytesPerOp)*1e3/perOp, "cpu-MB/s")
	}
}

// BenchmarkServerReplay measures what a replayed ClientHello costs a
// server: it passes the MAC, so the server makes its ServerHello (with
// forward secrecy an X25519 key pair and exchange), derives the session
// keys, and fails only at the ClientFinished the replayer cannot make. The
// wrong-key case is what an attacker without any recorded hello can cost:
// one HMAC per configured key. cpu-ns/op is the server's work per attempt.
func BenchmarkServerReplay(b *testing.B) {
	key := newTestKey(b)
	for _, c := range []struct {
		name   string
		client *Config
	}{
		{"replay-fs", &Config{Keys: []*Key{key}}},
		{"replay-nofs", &Config{Keys: []*Key{key}, ForwardSecrecy: ForwardSecrecyOff}},
		{"wrong-key", &Config{Keys: []*Key{newTestKey(b)}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			// Record one ClientHello, as an attacker on the path would.
			a, s := net.Pipe()
			go Client(a, c.client).Handshake()
			hello := make([]byte, helloSize)
			_, err := io.ReadFull(s, hello)
			require.NoError(b, err)
			a.Close()
			s.Close()
			garbage := make([]byte, finishedLen)
			garbage[0], garbage[1] = Version, msgClientFinished

			srvCfg := &Config{Keys: []*Key{key}}
			b.ReportAllocs()
			cpu := processCPUTime()
			for range b.N {
				cc, sc := net.Pipe()
				go func() {
					cc.Write(hello)
					io.CopyN(io.Discard, cc, helloSize)
					cc.Write(garbage)
					cc.Close()
				}()
				if Server(sc, srvCfg).Handshake() == nil {
					b.Fatal("a replayed hello completed a handshake")
				}
			}
			reportCPU(b, processCPUTime()-cpu, 0)
		})
	}
}
