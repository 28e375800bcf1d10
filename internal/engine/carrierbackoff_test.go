package engine

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedForwarder is a connecting Forwarder whose n-th carrier (from 0)
// is made by carrier(n), and which counts the carriers it opened.
func scriptedForwarder(carrier func(n int) Carrier) (*Forwarder, *atomic.Int32) {
	var opened atomic.Int32
	f := &Forwarder{
		SecureSide: SecureOutbound,
		Mux:        &Mux{},
		Dial: func(context.Context, net.Conn) (net.Conn, error) {
			a, b := net.Pipe()
			go func() { _, _ = io.Copy(io.Discard, b); b.Close() }()
			return a, nil
		},
		Secure: func(context.Context, net.Conn) (Conn, error) {
			n := opened.Add(1) - 1
			return &Secured{Carrier: carrier(int(n))}, nil
		},
	}
	return f, &opened
}

// refusedCarrier is a carrier as a listener at its --max-pending leaves
// it: closed right after its handshake, or sent away first, here 150 ms
// after it (a loaded listener: a pause that depended on how long the
// carrier lived reopened such carriers at once).
func refusedCarrier(awayFirst bool) Carrier {
	c := newFakeCarrier()
	if awayFirst {
		time.AfterFunc(150*time.Millisecond, func() {
			c.GoAway()
			time.AfterFunc(time.Millisecond, c.end)
		})
	} else {
		c.end()
	}
	return c
}

// TestRefusedCarriersBackOff: a listener that refuses every carrier (it
// has as many as it takes) gets them again after a pause doubling from
// 100 ms, jittered to no less than half of it, not in a tight loop:
// within 2 s, at most 6 (pauses of at least 50, 100, 200, 400 and 800
// ms), whichever way the refusal is seen, however long it takes to come
// (docs/PROTOCOL.md 7.7).
func TestRefusedCarriersBackOff(t *testing.T) {
	for name, awayFirst := range map[string]bool{"go-away first": true, "closed at once": false} {
		t.Run(name, func(t *testing.T) {
			f, opened := scriptedForwarder(func(int) Carrier { return refusedCarrier(awayFirst) })
			p := f.startCarriers(true)
			require.Eventually(t, func() bool { return opened.Load() >= 2 }, 10*time.Second, time.Millisecond, "it retries")
			time.Sleep(2 * time.Second)
			n := opened.Load()
			p.close()
			assert.LessOrEqual(t, n, int32(6), "carriers opened against a refusing listener within about 2 s")
		})
	}
}

// servingCarrier is a carrier that stays up and whose streams hear from
// the listener: their WriteTo writes a byte and ends cleanly.
type servingCarrier struct{ *fakeCarrier }

type servingStream struct{ net.Conn }

func (servingStream) CloseWrite() error { return nil }

func (servingStream) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write([]byte("x"))
	return int64(n), err
}

func (c servingCarrier) Open(ctx context.Context) (net.Conn, error) {
	if _, err := c.fakeCarrier.Open(ctx); err != nil {
		return nil, err
	}
	a, _ := net.Pipe()
	return servingStream{a}, nil
}

// TestServedCarrierResetsBackoff: after five refused carriers the pause
// before the next is at least 800 ms; a carrier that then serves a stream
// resets it, so when that carrier ends its successor opens at once (here:
// well within the 1.6 s the pause would have grown to).
func TestServedCarrierResetsBackoff(t *testing.T) {
	var mu sync.Mutex
	var served *servingCarrier
	var reopenedAt time.Time
	f, opened := scriptedForwarder(func(n int) Carrier {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case n < 5:
			return refusedCarrier(true)
		case n == 5:
			served = &servingCarrier{newFakeCarrier()}
			return served
		}
		if reopenedAt.IsZero() {
			reopenedAt = time.Now()
		}
		return newFakeCarrier()
	})
	p := f.startCarriers(true)
	defer p.close()
	require.Eventually(t, func() bool { return opened.Load() == 6 }, 20*time.Second, time.Millisecond)
	s, _, err := p.open(context.Background(), 10*time.Second)
	require.NoError(t, err)
	_, err = s.(io.WriterTo).WriteTo(io.Discard)
	require.NoError(t, err)
	s.Close()
	mu.Lock()
	c := served
	mu.Unlock()
	endedAt := time.Now()
	c.end()
	require.Eventually(t, func() bool { return opened.Load() == 7 }, 10*time.Second, time.Millisecond)
	mu.Lock()
	gap := reopenedAt.Sub(endedAt)
	mu.Unlock()
	assert.Less(t, gap, 1500*time.Millisecond, "the carrier that served a stream reset the pause")
}
