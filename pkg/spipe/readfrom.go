package spipe

import (
	"io"

	"github.com/spipe-dev/spipe/pkg/spipe/frame"
	"github.com/spipe-dev/spipe/pkg/spipe/internal/pool"
)

// ReadFrom implements io.ReaderFrom, so io.Copy(conn, r) reads from r
// straight into the plaintext area of the next frame and seals it there in
// place: each read of up to one frame's data becomes one frame, sent with
// one write, with no buffer between r and the frame. It returns the number
// of bytes sent and the first error, r's or its own, as Write does; r's
// io.EOF ends it without error (and without CloseWrite).
//
// Reads go into a small-tier frame (see tiers) until two in a row fill it:
// the source has more queued, and the next reads go into frames as large
// as the limit allows, until one returns less than it asked for. So a bulk
// source is sealed in large frames, and an interactive one in frames of
// exactly what each read returned, sent at once. (One full read is not
// enough: a 64 KiB message fills a small frame, with one byte left for the
// next read.)
//
// The frame buffers are ReadFrom's own, so while r blocks nothing is
// locked: Write, SendKeepalive, CloseWrite and Close work from other
// goroutines, their frames and ReadFrom's taking their turns.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.byteStream(); err != nil {
		return 0, err
	}
	out := &c.out
	out.mu.Lock()
	if err := c.writable(); err != nil {
		out.mu.Unlock()
		return 0, err
	}
	smallSize, bigSize, bigTier, off := out.smallSize, out.bigSize, out.bigTier(), out.fc.DataOffset()
	out.mu.Unlock()

	small := pool.Get(smallSize)
	defer pool.Put(small)
	var big *[]byte
	defer func() {
		if big != nil {
			pool.Put(big)
		}
	}()
	buf := *small
	var n int64
	fulls := 0 // consecutive reads that filled a small frame
	for {
		area := buf[off : off+out.dataCap(len(buf))]
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
		switch {
		case big != nil && m < len(area):
			// The source is drained for now: wait on the small tier.
			pool.Put(big)
			big, buf = nil, *small
		case big == nil && m == len(area):
			if fulls++; fulls >= 2 && bigTier {
				big = pool.Get(bigSize)
				buf, fulls = *big, 0
			}
		case big == nil:
			fulls = 0
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
