package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe"
)

// recorder is an Observer that counts the bytes it is told of.
type recorder struct {
	nopObserver
	mu               sync.Mutex
	toTarget, toPeer int
}

func (r *recorder) Bytes(toTarget bool, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if toTarget {
		r.toTarget += n
	} else {
		r.toPeer += n
	}
}

// spipeServer runs serve on every connection a spipe server accepts until
// the test ends, and closes it afterwards; it returns its address.
func spipeServer(t *testing.T, cfg *spipe.Config, serve func(*spipe.Conn)) string {
	ln := listenTCP(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				sc := spipe.Server(c, cfg)
				defer sc.Close()
				serve(sc)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// spipeSink is a spipe server that reads a whole stream and answers with
// its SHA-256; it returns its address.
func spipeSink(t *testing.T, cfg *spipe.Config) string {
	return spipeServer(t, cfg, func(sc *spipe.Conn) {
		h := sha256.New()
		if _, err := io.Copy(h, sc); err != nil {
			return
		}
		sc.Write(h.Sum(nil))
		sc.CloseWrite()
	})
}

// spipeSource is a spipe server that sends n bytes, then its close-write;
// it returns its address.
func spipeSource(t *testing.T, cfg *spipe.Config, n int) string {
	return spipeServer(t, cfg, func(sc *spipe.Conn) {
		if _, err := sc.Write(make([]byte, n)); err != nil {
			return
		}
		sc.CloseWrite()
	})
}

// handledByConnect runs one connection through a forwarder shaped like
// "spipe connect" (see connectSide) with Handle, and returns the client's
// end of it and Handle's result.
func handledByConnect(t *testing.T, target string, cfg *spipe.Config) (net.Conn, <-chan error) {
	t.Helper()
	f := &Forwarder{
		SecureSide: SecureOutbound,
		Secure: func(ctx context.Context, c net.Conn) (Conn, error) {
			sc := spipe.Client(c, cfg)
			return sc, sc.HandshakeContext(ctx)
		},
		Dial: (&TargetDialer{Target: Addr{Network: "tcp", Address: target}}).Dial,
	}
	client, raw := accepted(t)
	done := make(chan error, 1)
	go func() { done <- f.Handle(context.Background(), raw) }()
	return client, done
}

// transferError waits for Handle's result, which must be a TransferError,
// and returns it.
func transferError(t *testing.T, done <-chan error) *TransferError {
	t.Helper()
	select {
	case err := <-done:
		te, ok := errors.AsType[*TransferError](err)
		require.True(t, ok, "%v", err)
		return te
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end")
		return nil
	}
}

// connectSide is a forwarder shaped like "spipe connect": plaintext in,
// spipe out to target.
func connectSide(t *testing.T, target string, cfg *spipe.Config, obs Observer) string {
	return serveWith(t, &Forwarder{
		SecureSide: SecureOutbound,
		Secure: func(ctx context.Context, c net.Conn) (Conn, error) {
			sc := spipe.Client(c, cfg)
			return sc, sc.HandshakeContext(ctx)
		},
		Dial:     (&TargetDialer{Target: Addr{Network: "tcp", Address: target}}).Dial,
		Observer: obs,
	})
}

func testConfig(t *testing.T) *spipe.Config {
	key, err := spipe.NewKey(make([]byte, 32))
	require.NoError(t, err)
	return &spipe.Config{Keys: []*spipe.Key{key}, ForwardSecrecy: spipe.ForwardSecrecyOff}
}

// TestCopyIntoFrames: the plaintext side's bytes reach the spipe side
// through its ReadFrom intact, every one of them counted, and the end of
// the stream is carried as the authenticated close-write.
func TestCopyIntoFrames(t *testing.T) {
	cfg := testConfig(t)
	obs := &recorder{}
	addr := connectSide(t, spipeSink(t, cfg), cfg, obs)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	msg := make([]byte, 300_001)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	_, err = c.Write(msg)
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	sum, err := io.ReadAll(c)
	require.NoError(t, err)
	want := sha256.Sum256(msg)
	assert.Equal(t, want[:], sum)
	c.Close()
	// The connection's goroutines report their last counts as they end.
	assert.Eventually(t, func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return obs.toTarget == len(msg) && obs.toPeer == len(sum)
	}, 10*time.Second, 10*time.Millisecond)
	obs.mu.Lock()
	defer obs.mu.Unlock()
	assert.Equal(t, len(msg), obs.toTarget, "bytes counted toward the target")
	assert.Equal(t, len(sum), obs.toPeer, "bytes counted back")
}

// TestCopyIntoFramesNamesTheFailingSide: a plaintext client that resets
// mid-stream is a failed read on the client side, not a failed write to
// the target; and it is how the connection ended, not a failure.
func TestCopyIntoFramesNamesTheFailingSide(t *testing.T) {
	cfg := testConfig(t)
	c, done := handledByConnect(t, spipeSink(t, cfg), cfg)
	_, err := c.Write(make([]byte, 10_000))
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // let the forwarder connect and start copying
	require.NoError(t, c.(*net.TCPConn).SetLinger(0))
	require.NoError(t, c.Close())
	te := transferError(t, done)
	assert.Equal(t, "client", te.Side)
	assert.Equal(t, "read", te.Op)
	how, ok := endOf(te)
	assert.True(t, ok && how == endReset, "%v: %s, %v", te, how, ok)
}

// TestCopyFromFrames: the spipe side's frames reach the plaintext side
// through its WriteTo intact and counted, frames larger than 64 KiB
// included, and its close-write ends the plaintext stream cleanly.
func TestCopyFromFrames(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxPayload = spipe.MaxPayloadLimit
	obs := &recorder{}
	const n = 5 << 20
	addr := connectSide(t, spipeSource(t, cfg, n), cfg, obs)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second)))
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, make([]byte, n), got)
	assert.Eventually(t, func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return obs.toPeer == n
	}, 10*time.Second, 10*time.Millisecond, "bytes counted back")
}

// TestCopyFromFramesNamesTheFailingSide: a plaintext client that has
// ended its own stream and then resets while frames are coming is a
// failed write on the client side, not a failed read of the spipe side.
func TestCopyFromFramesNamesTheFailingSide(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxPayload = spipe.MaxPayloadLimit
	c, done := handledByConnect(t, spipeSource(t, cfg, 1<<30), cfg)
	require.NoError(t, c.(*net.TCPConn).CloseWrite()) // the other direction ends cleanly
	_, err := io.ReadFull(c, make([]byte, 10_000))
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).SetLinger(0))
	require.NoError(t, c.Close())
	te := transferError(t, done)
	assert.Equal(t, "client", te.Side)
	assert.Equal(t, "write", te.Op)
	how, ok := endOf(te)
	assert.True(t, ok && how == endReset, "%v: %s, %v", te, how, ok)
}
