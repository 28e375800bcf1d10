package spipe

import (
	"io"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
)

// ReadFrom implements io.ReaderFrom, so io.Copy(conn, r) reads from r
// straight into the plaintext area of the next frame and seals it there in
// place: each read of up to one frame's data becomes one frame, sent with
// one write, with no buffer between r and the frame. It returns the number
// of bytes sent and the first error, r's or its own, as Write does; r's
// io.EOF ends it without error (and without CloseWrite).
//
// The frame buffer is ReadFrom's own, so while r blocks nothing is locked:
// Write, SendKeepalive, CloseWrite and Close work from other goroutines,
// their frames and ReadFrom's taking their turns.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.handshakeOnce(); err != nil {
		return 0, err
	}
	out := &c.out
	out.mu.Lock()
	if err := c.writable(); err != nil {
		out.mu.Unlock()
		return 0, err
	}
	limit, maxData, off := out.limit, out.maxData, out.fc.DataOffset()
	out.mu.Unlock()

	buf := writeBufs.get(limit + frame.Overhead)
	defer writeBufs.put(buf)
	area := buf[off : off+maxData]
	var n int64
	for {
		m, rerr := r.Read(area)
		if m > 0 {
			if err := c.sendStaged(buf, area[:m]); err != nil {
				return n, err
			}
			n += int64(m)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// sendStaged seals and sends the data staged in buf's plaintext area as
// the next data frame.
func (c *Conn) sendStaged(buf, data []byte) error {
	out := &c.out
	out.mu.Lock()
	defer out.mu.Unlock()
	if err := c.writable(); err != nil {
		return err
	}
	return c.sendFrame(buf, frame.Data, data)
}
