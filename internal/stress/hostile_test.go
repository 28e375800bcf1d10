package stress

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// clientConfig is a library client holding the key in file path.
func clientConfig(t *testing.T, path string) *spipe.Config {
	t.Helper()
	material, err := os.ReadFile(path)
	require.NoError(t, err)
	key, err := spipe.NewKey(material)
	require.NoError(t, err)
	return &spipe.Config{Keys: []*spipe.Key{key}}
}

// honest makes one library connection to a listener: handshake, 1 KiB
// echoed, clean close. It returns how long it took.
func honest(addr string, cfg *spipe.Config) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := (&spipe.Dialer{Config: cfg}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	c := nc.(*spipe.Conn)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	msg := make([]byte, 1024)
	crand.Read(msg)
	if _, err := c.Write(msg); err != nil {
		return 0, err
	}
	if err := c.CloseWrite(); err != nil {
		return 0, err
	}
	got, err := io.ReadAll(c)
	if err != nil {
		return 0, err
	}
	if !bytes.Equal(got, msg) {
		return 0, io.ErrUnexpectedEOF
	}
	return time.Since(start), nil
}

// latencies runs n honest connections one after another.
func latencies(t *testing.T, n int, addr string, cfg *spipe.Config) []time.Duration {
	t.Helper()
	var d []time.Duration
	for range n {
		l, err := honest(addr, cfg)
		require.NoError(t, err, "an honest client failed")
		d = append(d, l)
	}
	slices.Sort(d)
	return d
}

// TestHostileClients: while many connections from another address stall
// in the handshake and others send garbage, oversize frame headers or
// garbage after a valid handshake, the listener keeps serving honest
// clients at close to their normal latency, holds the stallers up to its
// per-source cap (each one beyond it cuts the oldest) and cuts those at
// the first-message deadline or the handshake timeout, whichever comes
// first, counts every hostile connection by reason in its metrics, and
// logs the failures of key holders each, but the handshake failures of
// each source only up to the rate limit (what the limiter says about what
// it held back is tested in internal/engine).
func TestHostileClients(t *testing.T) {
	stallers := pick(150, 500) // more than the default --max-conns
	const perSource = 100
	garbage := pick(20, 100)
	keyHolders := pick(10, 50)
	hsTimeout := pick(2*time.Second, 4*time.Second)
	// The short form's handshake timeout comes before the first-message
	// deadline, the long form's after it.
	cutAt, cutReason := hsTimeout, "timeout"
	if firstMessageDeadline < hsTimeout {
		cutAt, cutReason = firstMessageDeadline, "hello_timeout"
	}
	key := pipetest.KeyFile(t)
	cfg := clientConfig(t, key)
	tg := startTarget(t, false)
	// The default --max-conns (100): stallers, more of them than that,
	// must not take the places of clients that prove the key.
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.addr(), key, func(o *service.Options) {
		o.HandshakeTimeout = hsTimeout
		pipetest.WithMetrics(o)
		o.MaxPendingPerSource = perSource
	})
	start := time.Now()

	baseline := latencies(t, 30, listen.Addr, cfg)

	// Stallers: the first 5 bytes of a ClientHello, then silence. Each
	// measures how long the listener keeps it.
	held := make([]time.Duration, stallers)
	var stalled, cut sync.WaitGroup
	for i := range stallers {
		stalled.Add(1)
		cut.Add(1)
		go func() {
			defer cut.Done()
			// Timed from before the dial: the listener's clock starts
			// later, so a cut before the timeout shows here.
			start := time.Now()
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
			c, err := d.Dial("tcp", listen.Addr)
			if errors.Is(err, syscall.ECONNRESET) {
				// Accepted, and cut for a newer staller before this
				// dial returned.
				held[i] = time.Since(start)
				stalled.Done()
				return
			}
			if !assert.NoError(t, err) {
				stalled.Done()
				return
			}
			defer c.Close()
			_, err = c.Write([]byte{spipe.Version, 1, 0, 0, 0})
			stalled.Done()
			if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
				// Cut for a newer staller between the dial and the write.
				held[i] = time.Since(start)
				return
			}
			if !assert.NoError(t, err) {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(hsTimeout + 30*time.Second))
			_, err = c.Read(make([]byte, 1))
			held[i] = time.Since(start)
			assert.Error(t, err, "the listener answered a staller")
		}()
	}
	stalled.Wait()

	// The other hostiles run in a loop until the honest clients are done.
	stop := make(chan struct{})
	var hostile sync.WaitGroup
	run := func(n int, f func(i int)) {
		hostile.Add(1)
		go func() {
			defer hostile.Done()
			for i := 0; i < n; i++ {
				f(i)
			}
			<-stop
		}()
	}
	run(garbage, func(i int) {
		b := make([]byte, 300)
		crand.Read(b)
		b[0] = []byte{0, spipe.Version}[i%2] // another version; ours, then a bad MAC
		rawExchange(t, listen.Addr, b)
	})
	run(keyHolders, func(int) {
		// A header announcing 16 MiB after a valid handshake.
		keyHolderSends(t, listen.Addr, cfg, []byte{0xff, 0xff, 0xff})
	})
	run(keyHolders, func(int) {
		// A well-formed header, then bytes that are not a sealed payload.
		b := make([]byte, frame.Overhead+400)
		crand.Read(b)
		copy(b, []byte{0, 400 >> 8, 400 & 0xff})
		keyHolderSends(t, listen.Addr, cfg, b)
	})
	during := latencies(t, 30, listen.Addr, cfg)
	close(stop)
	hostile.Wait()
	cut.Wait()

	t.Logf("honest latency: baseline median %v p90 %v; under attack median %v p90 %v (%d stallers)",
		median(baseline), baseline[len(baseline)*9/10], median(during), during[len(during)*9/10], stallers)
	// Generous: the machine is shared, but a listener blocked by stallers
	// would show the handshake timeout here.
	assert.Less(t, median(during), 5*median(baseline)+100*time.Millisecond, "honest clients slowed down")
	assert.Less(t, during[len(during)*9/10], hsTimeout/2, "honest clients waited for stallers")
	slices.Sort(held)
	// The first stallers beyond the cap were cut as the later ones came;
	// the last perSource held on until cutAt.
	evicted := stallers - perSource
	t.Logf("stallers: %d cut for newer ones after %v .. %v, %d held for %v .. %v (cut at %v)", evicted,
		held[0], held[evicted-1], perSource, held[evicted], held[len(held)-1], cutAt)
	assert.Less(t, held[evicted-1], cutAt-10*time.Millisecond, "a staller beyond the per-source cap held on")
	assert.GreaterOrEqual(t, held[evicted], cutAt-10*time.Millisecond, "a staller under the per-source cap was cut early")
	assert.Less(t, held[len(held)-1], cutAt+5*time.Second, "a staller was kept past its deadline")

	for reason, n := range map[string]int{"evicted": evicted, cutReason: perSource, "version": garbage / 2, "auth": garbage / 2} {
		require.Eventually(t, func() bool { return handshakeFailures(t, listen, reason) >= float64(n) }, 10*time.Second, 20*time.Millisecond,
			"%s: %v handshake failures counted, want at least %d", reason, handshakeFailures(t, listen, reason), n)
	}
	assert.Equal(t, float64(evicted), handshakeFailures(t, listen, "evicted"), "handshakes cut for newer ones")
	for _, reason := range []string{"frame_too_large", "tampered"} {
		series := `spipe_transfer_failures_total{mode="listen",reason="` + reason + `"}`
		require.Eventually(t, func() bool { return listen.Metric(t, series) >= float64(keyHolders) }, 10*time.Second, 20*time.Millisecond,
			"%s: %v counted, want at least %d", series, listen.Metric(t, series), keyHolders)
	}
	l := listen.Log
	// The hostile handshakes came from two sources (stallers from
	// 127.0.0.2, garbage and key holders from 127.0.0.1): five lines a
	// minute each per stage, and a cut one never above debug.
	windows := int(time.Since(start)/time.Minute) + 1
	for _, stage := range []string{"handshake", "transfer"} {
		for _, src := range []string{"peer=127.0.0.1:", "peer=127.0.0.2:"} {
			if stage == "transfer" && src == "peer=127.0.0.2:" {
				continue // stallers never got that far
			}
			lines := l.Count("connection failed", "stage="+stage, src)
			assert.Positive(t, lines, stage, src)
			assert.LessOrEqual(t, lines, 5*windows, "%s failure lines from one source are not limited: %s", stage, src)
		}
	}
	assert.Zero(t, l.Count("level=WARN", "connection failed", "reason=evicted"), "a cut handshake was logged as a warning")
}

// rawExchange sends b on a fresh connection and waits for the listener to
// close it (it must, without answering).
func rawExchange(t *testing.T, addr string, b []byte) {
	c, err := net.Dial("tcp", addr)
	if !assert.NoError(t, err) {
		return
	}
	defer c.Close()
	_, _ = c.Write(b)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.Read(make([]byte, 1))
	assert.Zero(t, n, "the listener answered garbage")
	assert.False(t, isTimeout(err), "the listener kept a garbage connection open")
}

// keyHolderSends completes a handshake, then writes b under the protocol
// and waits for the listener to drop the connection.
func keyHolderSends(t *testing.T, addr string, cfg *spipe.Config, b []byte) {
	raw, err := net.Dial("tcp", addr)
	if !assert.NoError(t, err) {
		return
	}
	defer raw.Close()
	c := spipe.Client(raw, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !assert.NoError(t, c.HandshakeContext(ctx)) {
		return
	}
	_, _ = raw.Write(b)
	_ = raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = io.Copy(io.Discard, raw)
	assert.False(t, isTimeout(err), "the listener kept a bad stream open")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
