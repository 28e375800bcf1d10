// Package carrier is how package mux reaches the frames of a multiplexed
// spipe connection (mode 3, docs/PROTOCOL.md section 7): package spipe
// implements Frames for its Conn and installs Of; package mux runs the
// stream layer on top. It is internal to pkg/spipe so that the record
// layer's state (keys, counters, buffers) stays out of the public API:
// an application reaches streams only through package mux.
package carrier

import "github.com/spipe-dev/spipe/pkg/spipe/frame"

// Frames is the frame I/O of one multiplexed connection. ReadFrame is for
// one goroutine at a time; Send and CloseWrite may be called from any
// number, each frame going out whole and in the order Send was called.
type Frames interface {
	// ReadFrame reads and authenticates the next frame and returns its
	// type (a stream-layer type, or never CloseWrite or Keepalive: the
	// former ends reading with io.EOF, the latter is skipped) and its
	// body, data then fields, opened in place in the connection's receive
	// buffer: valid only until the next ReadFrame. Any other error is the
	// connection's for good, and the connection is then closed.
	ReadFrame() (frame.Type, []byte, error)
	// Buffered reports whether the receive buffer already holds bytes of
	// a next frame, so that ReadFrame will not wait for the transport:
	// the reader can batch what it does for a run of frames.
	Buffered() bool

	// DataOffset is where a frame's body starts in a send buffer, counted
	// from the frame's first byte.
	DataOffset() int
	// MaxBody is the largest body (data and fields) one frame toward the
	// peer may carry: its limit less the type byte, and padding.
	MaxBody() int
	// FrameLen is how many bytes of a send buffer a frame with a body of
	// n bytes takes: header, padded inner plaintext and tag.
	FrameLen(n int) int

	// SendOne seals the frame of type t whose body of n bytes is staged
	// at buf[DataOffset():] and writes it with one call.
	SendOne(buf []byte, t frame.Type, n int) error
	// Send seals the frames staged in buf, each at its offset with its
	// body at Off+DataOffset(), laid end to end from offset 0, and writes
	// them with one call.
	Send(buf []byte, frames []Staged) error
	// CloseWrite sends the connection's close-write, the carrier's clean
	// end (section 7.4), and half-closes the transport if it can.
	CloseWrite() error
}

// Staged is one frame laid out in a send buffer.
type Staged struct {
	Type frame.Type
	Off  int // where the frame starts
	Body int // its body's length
}

// Of returns the frames of conn, a *spipe.Conn whose handshake chose the
// multiplexed mode; package spipe sets it at initialization. A connection
// yields its frames once: the stream layer owns them from then on.
var Of func(conn any) (Frames, error)
