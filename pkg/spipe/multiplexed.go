package spipe

import (
	"errors"
	"fmt"
	"io"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
	"github.com/spipe-dev/spipe/pkg/spipe/internal/carrier"
)

// In the multiplexed mode (mode 3) the connection's frames belong to the
// stream layer, package mux, which reaches them through carrier.Of; the
// byte-stream methods (Read, Write, ReadFrom, WriteTo, CloseWrite,
// SendKeepalive) fail with errMultiplexed.

// errMultiplexed is a byte-stream method called on a connection that runs
// the multiplexed mode: a caller's bug.
var errMultiplexed = errors.New("spipe: the connection runs the multiplexed mode: its streams are package mux's")

func init() { carrier.Of = carrierOf }

// carrierOf hands a multiplexed connection's frames to the stream layer,
// once.
func carrierOf(conn any) (carrier.Frames, error) {
	c, ok := conn.(*Conn)
	if !ok || c == nil {
		return nil, fmt.Errorf("spipe: %T is not a *spipe.Conn", conn)
	}
	if err := c.handshakeOnce(); err != nil {
		return nil, err
	}
	if !c.state.Multiplexed {
		return nil, errors.New("spipe: the connection runs the byte-stream mode")
	}
	if !c.carried.CompareAndSwap(false, true) {
		return nil, errors.New("spipe: the connection's streams are already carried")
	}
	return (*muxFrames)(c), nil
}

// muxFrames is a multiplexed Conn as the stream layer sees it.
type muxFrames Conn

func (m *muxFrames) c() *Conn { return (*Conn)(m) }

func (m *muxFrames) ReadFrame() (frame.Type, []byte, error) {
	c := m.c()
	in := &c.in
	in.mu.Lock()
	defer in.mu.Unlock()
	for {
		if in.err != nil {
			return 0, nil, in.err
		}
		f, err := c.nextSealed()
		if err != nil {
			return 0, nil, err
		}
		off := in.fc.DataOffset()
		t, body, err := c.openSealed(f[off:off], f)
		if err != nil {
			return 0, nil, err
		}
		switch t {
		case frame.Keepalive:
			continue
		case frame.CloseWrite:
			in.err = io.EOF
			c.releaseReadBuf()
			return 0, nil, io.EOF
		case frame.Data:
			return 0, nil, c.failRead(fmt.Errorf("spipe: read: frame %d: %w: a data frame in the multiplexed mode", in.counter-1, ErrMalformedFrame))
		}
		return t, body, nil
	}
}

func (m *muxFrames) Buffered() bool {
	in := &m.in
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.end > in.start
}

func (m *muxFrames) DataOffset() int { return m.out.fc.DataOffset() }

func (m *muxFrames) MaxBody() int { return m.out.maxData }

func (m *muxFrames) FrameLen(n int) int {
	return frame.HeaderSize + frame.PayloadSize(n, m.out.padTo) + frame.TagSize
}

func (m *muxFrames) SendOne(buf []byte, t frame.Type, n int) error {
	c := m.c()
	out := &c.out
	out.mu.Lock()
	defer out.mu.Unlock()
	if err := c.writable(); err != nil {
		return err
	}
	off := out.fc.DataOffset()
	return c.sendFrame(buf, t, buf[off:off+n])
}

func (m *muxFrames) Send(buf []byte, frames []carrier.Staged) error {
	c := m.c()
	out := &c.out
	out.mu.Lock()
	defer out.mu.Unlock()
	if err := c.writable(); err != nil {
		return err
	}
	off, end := out.fc.DataOffset(), 0
	for _, f := range frames {
		if out.counter > frame.MaxCounter {
			out.err = fmt.Errorf("spipe: write: %w", ErrCounterExhausted)
			return out.err
		}
		sealed := out.fc.Seal(buf[f.Off:f.Off], out.counter, f.Type, buf[f.Off+off:f.Off+off+f.Body], out.padTo)
		out.counter++
		end = f.Off + len(sealed)
	}
	return c.writeOut(buf[:end])
}

func (m *muxFrames) CloseWrite() error { return m.c().closeWrite() }
