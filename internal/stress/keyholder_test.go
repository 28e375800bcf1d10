package stress

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/internal/testutil/spec"
)

// The hostile key holders of the multiplexed mode (docs/PROTOCOL.md 7):
// clients that hold the key and use it to make the listener hold memory,
// dial its target for nothing, keep forwarding after their key was
// revoked, or ride out a restart. Each plays the client from the
// document alone (internal/testutil/spec), sending frames no honest
// client would.

// The stream layer's numbers the tests count with (docs/PROTOCOL.md 7.3).
const (
	streamWindow = 256 << 10
	frameCharge  = 64
)

// silentTarget accepts connections and never reads them: whatever a
// stream forwards to it stays in the listener, or in the kernel's socket
// buffers. It counts the connections it accepted.
type silentTarget struct {
	ln      net.Listener
	accepts atomic.Int64
	mu      sync.Mutex
	conns   []net.Conn
}

func startSilentTarget(t *testing.T) *silentTarget {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	st := &silentTarget{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			st.accepts.Add(1)
			st.mu.Lock()
			st.conns = append(st.conns, c)
			st.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		st.mu.Lock()
		defer st.mu.Unlock()
		for _, c := range st.conns {
			c.Close()
		}
	})
	return st
}

// credits reads the listener's frames for a key holder and adds up the
// credit each stream is granted; closed is closed once the carrier ends.
type credits struct {
	mu      sync.Mutex
	granted map[uint32]int64
	closed  chan struct{}
}

func readCredits(p *spec.Peer) *credits {
	c := &credits{granted: map[uint32]int64{}, closed: make(chan struct{})}
	go func() {
		defer close(c.closed)
		for {
			typ, body, err := p.Read()
			if err != nil {
				return
			}
			if typ == spec.Types["credit"] {
				c.mu.Lock()
				c.granted[binary.BigEndian.Uint32(body)] += int64(binary.BigEndian.Uint32(body[4:]))
				c.mu.Unlock()
			}
		}
	}()
	return c
}

func (c *credits) of(id uint32) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.granted[id]
}

// TestMuxSmallFramesMemory: a key holder opens 100 streams to a target
// that never reads and sends each nothing but 1-byte frames, packed by
// the thousand into each TCP write, as fast as the listener's credit
// lets it (the attack that made the yamux-based listener hold about
// 10 MB per stream). Every frame costs its stream's window 65 bytes, so
// the listener (a separate spipe process) holds at most a window per
// stream: its resident memory grows by less than 100 streams x 256 KiB x
// 1.5 + 32 MiB, and it says nothing is wrong (the key holder kept the
// rules), and it still serves an honest client afterwards.
func TestMuxSmallFramesMemory(t *testing.T) {
	const streams = 100
	perStream := pick(2*streamWindow/(1+frameCharge), 8*streamWindow/(1+frameCharge))
	bin := spipeBinary(t)
	key := pipetest.KeyFile(t)
	keyFile, err := os.ReadFile(key)
	require.NoError(t, err)
	tg := startSilentTarget(t)
	lp := pipetest.FreeAddr(t)
	listen := startProc(t, bin, "listen", "-s", lp, "-t", tg.ln.Addr().String(), "-k", key, "--max-conns", "1000")
	before := listen.status(t, "VmRSS")
	listen.resetPeak()

	raw, err := net.Dial("tcp", lp)
	require.NoError(t, err)
	defer raw.Close()
	p, err := spec.Dial(raw, keyFile, "", 3, 0)
	require.NoError(t, err)
	cr := readCredits(p)

	// Each stream may spend its window and whatever credit comes back,
	// in charges of 65; the frames go out a thousand to a write.
	spent := make([]int64, streams+1)
	sent := make([]int, streams+1)
	var wire []byte
	flush := func() {
		if len(wire) > 0 {
			_, err := raw.Write(wire)
			require.NoError(t, err)
			wire = wire[:0]
		}
	}
	for id := uint32(1); id <= streams; id++ {
		wire = append(wire, p.Frame("open", []byte{'x'}, map[string]uint64{"stream_id": uint64(id)})...)
		spent[id], sent[id] = 1+frameCharge, 1
	}
	flush()
	idle := time.Now()
	for time.Since(idle) < 500*time.Millisecond {
		progress := false
		for id := uint32(1); id <= streams; id++ {
			room := (streamWindow + cr.of(id) - spent[id]) / (1 + frameCharge)
			for k := int64(0); k < room && sent[id] < perStream; k++ {
				wire = append(wire, p.Frame("stream data", []byte{'x'}, map[string]uint64{"stream_id": uint64(id)})...)
				spent[id] += 1 + frameCharge
				sent[id]++
				progress = true
				if len(wire) >= 64<<10 {
					flush()
				}
			}
		}
		flush()
		if progress {
			idle = time.Now()
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	total := 0
	for _, n := range sent {
		total += n
	}
	peak := listen.status(t, "VmHWM")
	bound := int64(streams*streamWindow*3/2+32<<20) >> 10
	t.Logf("%d 1-byte frames into %d streams (%d to %d each); listener RSS %d MiB before, peak %d MiB: grew %d KiB (bound %d KiB)",
		total, streams, slicesMin(sent[1:]), slicesMax(sent[1:]), before>>10, peak>>10, peak-before, bound)
	assert.Less(t, peak-before, bound, "the listener's memory grew beyond its streams' windows")
	select {
	case <-cr.closed:
		t.Fatal("the listener closed the carrier of a key holder that kept the rules")
	default:
	}
	assert.NotContains(t, listen.log.String(), "carrier failed")

	// An honest client is served beside it.
	connect := startProc(t, bin, "connect", "--mux", "-s", pipetest.FreeAddr(t), "-t", lp, "-k", key)
	_ = connect
	tgAccepts := tg.accepts.Load()
	c, err := net.Dial("tcp", connect.listenAddr(t))
	if err == nil {
		_, err = c.Write([]byte("hello"))
		c.Close()
	}
	require.NoError(t, err)
	require.Eventually(t, func() bool { return tg.accepts.Load() > tgAccepts }, 10*time.Second, 10*time.Millisecond,
		"an honest stream reached the target beside the key holder")
}

func slicesMin(s []int) int {
	m := s[0]
	for _, v := range s {
		m = min(m, v)
	}
	return m
}

func slicesMax(s []int) int {
	m := s[0]
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

// TestMuxOpenResetFlood: a key holder floods a carrier with pairs of an
// open and its reset, packed into large writes. A stream reset while it
// waits for a place is never dialled: with the one --max-conns place
// taken, not one of the flood's streams reaches the target. With places
// free, the streams reset before their target sent a byte draw on the
// carrier's allowance (docs/PROTOCOL.md 7.8), so target connections are
// bounded by its burst and refill, however many pairs arrive; and an
// honest stream of another carrier is served throughout.
func TestMuxOpenResetFlood(t *testing.T) {
	pairs := pick(20_000, 200_000)
	key := pipetest.KeyFile(t)
	keyFile, err := os.ReadFile(key)
	require.NoError(t, err)

	flood := func(t *testing.T, addr string) (sent int, took time.Duration) {
		raw, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer raw.Close()
		p, err := spec.Dial(raw, keyFile, "", 3, 0)
		require.NoError(t, err)
		go io.Copy(io.Discard, raw)
		start := time.Now()
		var wire []byte
		for i := 1; i <= pairs; i++ {
			id := map[string]uint64{"stream_id": uint64(i), "code": 0}
			wire = append(wire, p.Frame("open", []byte("GET / HTTP/1.0\r\n\r\n"), id)...)
			wire = append(wire, p.Frame("reset", nil, id)...)
			if len(wire) >= 64<<10 || i == pairs {
				if _, err := raw.Write(wire); err != nil {
					return i, time.Since(start)
				}
				wire = wire[:0]
			}
		}
		return pairs, time.Since(start)
	}

	t.Run("waiting for a place", func(t *testing.T) {
		tg := startSilentTarget(t)
		listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.ln.Addr().String(), key,
			func(o *service.Options) { o.MaxConns = 1 })
		connect := pipetest.MuxConnect(t, listen.Addr, key, nil)
		holder := pipetest.Dial(t, connect.Addr) // takes the one place
		_, err := holder.Write([]byte("hold"))
		require.NoError(t, err)
		require.Eventually(t, func() bool { return tg.accepts.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
		sent, took := flood(t, listen.Addr)
		t.Logf("%d open+reset pairs in %v", sent, took.Round(time.Millisecond))
		time.Sleep(200 * time.Millisecond)
		holder.Close() // the place is free again: nothing of the flood may take it
		time.Sleep(500 * time.Millisecond)
		assert.Equal(t, int64(1), tg.accepts.Load(), "a stream reset while it waited was dialled")
	})

	t.Run("places free", func(t *testing.T) {
		tg := startSilentTarget(t)
		listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.ln.Addr().String(), key,
			func(o *service.Options) { o.MaxConns = 10_000 })
		echo := pipetest.EchoTarget(t)
		honestListen := pipetest.Start(t, service.Listen, "127.0.0.1:0", echo.Addr, key, nil)
		connect := pipetest.MuxConnect(t, honestListen.Addr, key, nil)
		start := time.Now()
		sent, took := flood(t, listen.Addr)
		got := pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), []byte("honest"))
		assert.Equal(t, "honest", string(got))
		time.Sleep(300 * time.Millisecond)
		elapsed := time.Since(start)
		dials := tg.accepts.Load()
		bound := allowanceBound(elapsed)
		t.Logf("%d open+reset pairs in %v: %d target connections in %v (bound %d)", sent, took.Round(time.Millisecond),
			dials, elapsed.Round(time.Millisecond), bound)
		assert.LessOrEqual(t, dials, bound, "the flood got more target connections than the carrier's allowance")
	})
}

// allowanceBound is docs/PROTOCOL.md 7.8's bound on the target
// connections of one carrier whose target never sent a byte, in d: 100,
// and 100 a second more.
func allowanceBound(d time.Duration) int64 { return int64(100 + 100*d.Seconds()) }

// TestMuxSilentTargetsFlood: a key holder gets no more target
// connections whose target never says a word than its carrier's
// allowance holds (docs/PROTOCOL.md 7.8), however it ends its streams
// and however it batches them: streams opened by the hundred, left until
// their target is dialled and then reset or half-closed all at once, or
// opens each followed at once by its half-close (which a target that
// closes at the end of its input answers with nothing). Meanwhile an
// honest client on another carrier of the same listener is served
// throughout, its streams answered by the same target.
func TestMuxSilentTargetsFlood(t *testing.T) {
	key := pipetest.KeyFile(t)
	keyFile, err := os.ReadFile(key)
	require.NoError(t, err)
	run := pick(time.Second, 3*time.Second)
	for _, tc := range []struct {
		name string
		// round sends one round of the flood's frames, opening streams
		// from *next on.
		round func(p *spec.Peer, raw net.Conn, next *uint64) error
	}{
		{"batches reset once dialled", batches("reset")},
		{"batches half-closed once dialled", batches("end")},
		{"opens each half-closed at once", func(p *spec.Peer, raw net.Conn, next *uint64) error {
			var wire []byte
			for range 200 {
				*next++
				wire = append(wire, p.Frame("open", []byte("x"), id(*next))...)
				wire = append(wire, p.Frame("end", nil, id(*next))...)
			}
			_, err := raw.Write(wire)
			time.Sleep(10 * time.Millisecond)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := startAnsweringTarget(t)
			listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.addr, key,
				func(o *service.Options) { o.MaxConns = 10_000 })
			connect := pipetest.MuxConnect(t, listen.Addr, key, nil)

			raw, err := net.Dial("tcp", listen.Addr)
			require.NoError(t, err)
			defer raw.Close()
			p, err := spec.Dial(raw, keyFile, "", 3, 0)
			require.NoError(t, err)
			go io.Copy(io.Discard, raw)
			honest := make(chan error, 1)
			stop := make(chan struct{})
			go func() { honest <- echoUntil(connect.Addr, stop) }()

			start := time.Now()
			var next uint64
			for time.Since(start) < run {
				require.NoError(t, tc.round(p, raw, &next))
			}
			close(stop)
			require.NoError(t, <-honest, "an honest stream beside the flood")
			time.Sleep(300 * time.Millisecond)
			elapsed := time.Since(start)
			dials, bound := tg.flood.Load(), allowanceBound(elapsed)
			t.Logf("%s: %d streams opened, %d target connections in %v (bound %d); %d honest streams answered",
				tc.name, next, dials, elapsed.Round(time.Millisecond), bound, tg.honest.Load())
			assert.LessOrEqual(t, dials, bound, "the flood got more silent target connections than the carrier's allowance")
			assert.Positive(t, tg.honest.Load())
		})
	}
}

// batches is a round of the flood that opens 500 streams, waits for
// their target to be dialled (while the allowance lasts), then ends them
// all with frames of kind ("reset", or "end": half-closed).
func batches(kind string) func(p *spec.Peer, raw net.Conn, next *uint64) error {
	return func(p *spec.Peer, raw net.Conn, next *uint64) error {
		first := *next + 1
		var wire []byte
		for range 500 {
			*next++
			wire = append(wire, p.Frame("open", []byte("x"), id(*next))...)
		}
		if _, err := raw.Write(wire); err != nil {
			return err
		}
		time.Sleep(30 * time.Millisecond)
		wire = wire[:0]
		for n := first; n <= *next; n++ {
			wire = append(wire, p.Frame(kind, nil, map[string]uint64{"stream_id": n, "code": 0})...)
		}
		_, err := raw.Write(wire)
		time.Sleep(20 * time.Millisecond)
		return err
	}
}

// echoUntil echoes through addr, a new connection every 20 ms, until
// stop is closed; it returns the first failure.
func echoUntil(addr string, stop <-chan struct{}) error {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		case <-time.After(20 * time.Millisecond):
		}
		if err := pipetest.TryEcho(addr, fmt.Sprint("honest ", i)); err != nil {
			return fmt.Errorf("echo %d: %w", i, err)
		}
	}
}

// answeringTarget says nothing on a connection and closes it at the end
// of its input, unless the connection begins with "honest": that one it
// echoes. It counts both kinds.
type answeringTarget struct {
	addr          string
	flood, honest atomic.Int64
}

func startAnsweringTarget(t *testing.T) *answeringTarget {
	tg := &answeringTarget{}
	tg.addr = pipetest.NewTarget(t, func(c net.Conn) {
		first := make([]byte, len("honest"))
		n, err := io.ReadFull(c, first)
		if err != nil || string(first) != "honest" {
			tg.flood.Add(1)
			io.Copy(io.Discard, c)
			return
		}
		tg.honest.Add(1)
		c.Write(first[:n])
		io.Copy(c, c)
		c.(*net.TCPConn).CloseWrite()
	}).Addr
	return tg
}

// TestMuxRevokedKey: after the listener's key file is replaced and SIGHUP
// reloads it, a carrier opened with the old key gets go-away: its client
// can open no new stream there (its next carrier is refused, as a plain
// client with the old key is), while the stream it had open is kept and
// still carries data both ways.
func TestMuxRevokedKey(t *testing.T) {
	oldKey, newKey := pipetest.KeyFile(t), pipetest.KeyFile(t)
	keyPath := filepath.Join(t.TempDir(), "listen.key")
	copyFile(t, oldKey, keyPath)
	tg := pipetest.EchoTarget(t)
	listen := pipetest.Start(t, service.Listen, "127.0.0.1:0", tg.Addr, keyPath, nil)
	connect := pipetest.MuxConnect(t, listen.Addr, oldKey, func(o *service.Options) { o.HandshakeTimeout = 2 * time.Second })
	open := pipetest.Dial(t, connect.Addr)
	pipetest.EchoOnce(t, open, "before")

	copyFile(t, newKey, keyPath)
	listen.Reload()
	listen.Log.Wait(t, `msg="carrier's key is no longer loaded: it takes no new streams"`, nil)
	connect.Log.Wait(t, `msg="carrier going away`, nil)

	pipetest.EchoOnce(t, open, "kept")
	c := pipetest.Dial(t, connect.Addr)
	_, _ = c.Write([]byte("new"))
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	n, err := c.Read(make([]byte, 3))
	assert.Error(t, err, "a new stream was forwarded with a revoked key (%d bytes)", n)
	assert.False(t, isTimeout(err), "the connection waited past its bound instead of failing")
	pipetest.EchoOnce(t, open, "still kept")
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o600))
}

// TestMuxRestartWithStreamsOpen: the listener is restarted (SIGTERM, a new
// one on the same port moments later) while a stream is open through
// connect --mux. The open stream finishes intact on the old listener
// within its grace period, and a new connection is served by the new
// listener, not reset: the old one's go-away sent the client to a new
// carrier at once, and the client retried within a quarter second while
// the connection waited for it.
func TestMuxRestartWithStreamsOpen(t *testing.T) {
	key := pipetest.KeyFile(t)
	tg, release := pipetest.HeldEchoTarget(t)
	addr := pipetest.FreeAddr(t)
	grace := func(o *service.Options) { o.ShutdownTimeout = 20 * time.Second }
	old := pipetest.Start(t, service.Listen, addr, tg.Addr, key, grace)
	connect := pipetest.MuxConnect(t, addr, key, nil)
	tr := pipetest.StartTransfer(t, connect.Addr, tg, 1<<20)

	old.Shutdown()
	old.Log.Wait(t, `msg="shutting down: waiting for open connections" open=1`, nil)
	connect.Log.Wait(t, `msg="carrier going away`, nil)
	time.Sleep(300 * time.Millisecond)
	echo := pipetest.EchoTarget(t)
	pipetest.Start(t, service.Listen, addr, echo.Addr, key, nil)

	got := pipetest.RoundTrip(t, pipetest.Dial(t, connect.Addr), []byte("after the restart"))
	assert.Equal(t, "after the restart", string(got), "a new connection was not served by the new listener")
	release()
	assert.Equal(t, tr.Sent, <-tr.Got, "the stream open across the restart did not finish intact")
	require.NoError(t, old.Wait(t, 30*time.Second))
	assert.Zero(t, connect.Log.Count("connection failed"), "connect:\n%s", connect.Log.String())
}

// listenAddr is where a started connect process accepts: its -s.
func (p *proc) listenAddr(t *testing.T) string {
	for i, a := range p.cmd.Args {
		if a == "-s" && i+1 < len(p.cmd.Args) {
			return p.cmd.Args[i+1]
		}
	}
	t.Fatal("no -s")
	return ""
}
