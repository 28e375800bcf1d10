package spipe

import "io"

// WriteTo implements io.WriterTo, so io.Copy(w, conn) opens each frame in
// place in the receive buffer and writes its data to w straight from
// there: one write per data frame, whatever its size, with no buffer
// between the frame and w and no copy. As with Read, nothing of a frame
// reaches w before its tag is verified. It returns the number of bytes
// written and the first error, the connection's or w's; the peer's
// close-write ends it without error. Like Read, it holds the receiving
// direction until it returns.
func (c *Conn) WriteTo(w io.Writer) (int64, error) {
	if err := c.byteStream(); err != nil {
		return 0, err
	}
	in := &c.in
	in.mu.Lock()
	defer in.mu.Unlock()
	var n int64
	for {
		if len(in.data) > 0 {
			m, err := w.Write(in.data)
			n += int64(m)
			in.data = in.data[m:]
			switch {
			case err != nil:
				return n, err
			case len(in.data) > 0:
				return n, io.ErrShortWrite
			}
			continue
		}
		switch {
		case in.err == io.EOF:
			return n, nil
		case in.err != nil:
			return n, in.err
		}
		// No destination to open into: the frame's data is left in place
		// in in.data.
		if _, err := c.readFrame(nil); err != nil {
			return n, err
		}
	}
}
