package engine

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// fakeCarrier is a Carrier whose streams are pipe ends; end ends it, and
// exhaust makes it refuse new streams while it lives.
type fakeCarrier struct {
	done, away     chan struct{}
	once, awayOnce sync.Once
	exhausted      atomic.Bool
	opened         atomic.Int32
}

func newFakeCarrier() *fakeCarrier {
	return &fakeCarrier{done: make(chan struct{}), away: make(chan struct{})}
}

type pipeStream struct{ net.Conn }

func (pipeStream) CloseWrite() error { return nil }

func (c *fakeCarrier) Open(ctx context.Context) (net.Conn, error) {
	select {
	case <-c.done:
		return nil, mux.ErrSessionClosed
	default:
	}
	if c.exhausted.Load() {
		return nil, errors.New("no more stream ids")
	}
	c.opened.Add(1)
	a, _ := net.Pipe()
	return pipeStream{a}, nil
}
func (c *fakeCarrier) Accept() (net.Conn, error)  { <-c.done; return nil, mux.ErrSessionClosed }
func (c *fakeCarrier) NumStreams() int            { return 0 }
func (c *fakeCarrier) Done() <-chan struct{}      { return c.done }
func (c *fakeCarrier) Err() error                 { return nil }
func (c *fakeCarrier) Close() error               { c.end(); return nil }
func (c *fakeCarrier) GoAway() error              { c.awayOnce.Do(func() { close(c.away) }); return nil }
func (c *fakeCarrier) GoingAway() <-chan struct{} { return c.away }
func (c *fakeCarrier) RemoteAddr() net.Addr       { return &net.TCPAddr{} }
func (c *fakeCarrier) end()                       { c.once.Do(func() { close(c.done) }) }

// carrierForwarder is a connecting Forwarder whose carriers are fakes,
// handed out in the order they are opened.
func carrierForwarder(t *testing.T, m *Mux) (*Forwarder, <-chan *fakeCarrier) {
	opened := make(chan *fakeCarrier, 16)
	f := &Forwarder{
		SecureSide: SecureOutbound,
		Mux:        m,
		Dial: func(context.Context, net.Conn) (net.Conn, error) {
			a, b := net.Pipe()
			t.Cleanup(func() { b.Close() })
			return a, nil
		},
		Secure: func(context.Context, net.Conn) (Conn, error) {
			c := newFakeCarrier()
			opened <- c
			return &Secured{Carrier: c}, nil
		},
	}
	return f, opened
}

func nextCarrier(t *testing.T, opened <-chan *fakeCarrier) *fakeCarrier {
	t.Helper()
	select {
	case c := <-opened:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no carrier opened")
		return nil
	}
}

// TestCarrierPool: the pool opens its carriers at once, puts each stream
// on the carrier carrying the fewest, makes a connection wait (within its
// deadline) while every carrier is full, opens a new carrier when one
// ends, and retires one that can open no more streams, opening its
// successor while it carries its streams to their end.
func TestCarrierPool(t *testing.T) {
	f, opened := carrierForwarder(t, &Mux{Carriers: 2, StreamsPerCarrier: 1})
	p := f.startCarriers(false)
	defer p.close()
	a, b := nextCarrier(t, opened), nextCarrier(t, opened)
	require.Eventually(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return len(p.live) == 2 }, 5*time.Second, time.Millisecond)

	s1, _, err := p.open(context.Background(), time.Hour)
	require.NoError(t, err)
	s2, _, err := p.open(context.Background(), time.Hour)
	require.NoError(t, err)
	assert.Equal(t, int32(1), a.opened.Load(), "one stream on each carrier")
	assert.Equal(t, int32(1), b.opened.Load())

	_, _, err = p.open(context.Background(), 50*time.Millisecond)
	assert.ErrorIs(t, err, errNoCarrier, "every carrier full: the connection waited, then failed")
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	got := make(chan error, 1)
	go func() {
		_, _, err := p.open(context.Background(), time.Hour)
		got <- err
	}()
	s1.Close() // room on one carrier
	require.NoError(t, <-got, "a waiting connection takes the place a closed stream gave back")

	// A carrier that ends is replaced.
	a.end()
	c := nextCarrier(t, opened)
	s2.Close()
	// Carriers that live on but open no more streams are retired and
	// replaced; the connection opens on a successor.
	b.exhausted.Store(true)
	c.exhausted.Store(true)
	s, _, err := p.open(context.Background(), 5*time.Second)
	require.NoError(t, err, "a stream opens on a successor")
	s.Close()
	d := nextCarrier(t, opened)
	assert.True(t, d != b && d != c)
}
