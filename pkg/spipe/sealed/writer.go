package sealed

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
)

// Writer seals what is written to it into a spipe file on an underlying
// io.Writer: the header as soon as it is made, then each chunk, in order,
// once the chunk is full and more plaintext follows. Close seals the
// final chunk; a file without it does not open (ErrTruncated), so a
// Writer that is not closed never leaves a file that passes for whole.
//
// A Writer is for one goroutine. Its chunks are sealed on Options.Workers
// goroutines, with at most 2 × Workers + 1 chunks in memory.
type Writer struct {
	dst   io.Writer
	pipe  *pipeline
	size  int // chunk size
	ptOff int
	cur   *job // the chunk being filled; sealed once more follows, or at Close
	index uint64
	err   error // sticky: the first write error, or errClosed
}

var errClosed = errors.New("sealed: write to a closed Writer")

// NewWriter writes the header of a new file to dst and returns a Writer
// for its plaintext. The file is sealed under s with the options in opts
// (nil for the defaults).
func NewWriter(dst io.Writer, s *Secret, opts *Options) (*Writer, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	h := &Header{Suite: o.Suite, ChunkSize: o.ChunkSize}
	if !s.isKey {
		h.Argon2 = o.Argon2
	}
	rnd := o.rand
	if rnd == nil {
		rnd = rand.Reader
	}
	if _, err := io.ReadFull(rnd, h.Salt[:]); err != nil {
		return nil, fmt.Errorf("sealed: salt: %w", err)
	}
	var header [HeaderSize]byte
	h.marshal(header[:])
	keys, err := s.derive(h, header[:], nil)
	if err != nil {
		return nil, err
	}
	copy(header[offMAC:], keys.headerMAC(header[:]))
	putChecksum(header[:])
	c, err := newChunkCipher(h.Suite, keys.payload[:])
	clear(keys.payload[:])
	if err != nil {
		return nil, fmt.Errorf("sealed: %w", err)
	}
	if _, err := dst.Write(header[:]); err != nil {
		return nil, fmt.Errorf("sealed: writing the header: %w", err)
	}
	w := &Writer{dst: dst, size: o.ChunkSize, ptOff: c.ptOff}
	w.pipe = newPipeline(o.Workers, o.ChunkSize+TagSize, sealer{c}.process)
	stopWhenUnreachable(w, w.pipe)
	w.cur = w.pipe.get()
	return w, nil
}

// sealer is a pipeline's work for a Writer: seal the chunk in place.
type sealer struct{ c *chunkCipher }

func (s sealer) process(j *job) {
	if j.src != nil {
		if err := readJob(j, j.buf[s.c.ptOff:s.c.ptOff+j.n]); err != nil {
			j.err = fmt.Errorf("sealed: reading the plaintext at byte %d: %w", j.at, err)
			return
		}
	}
	s.c.seal(j.buf, j.n, j.index, j.final, &j.nonce)
	j.n += TagSize
}

// Write seals p into the file as chunks fill. It returns an error only if
// writing to the underlying writer failed (then every later call fails
// too) or the Writer is closed.
func (w *Writer) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if w.err != nil {
			return written, w.err
		}
		if w.cur.n == w.size {
			w.next()
			continue
		}
		k := copy(w.cur.buf[w.ptOff+w.cur.n:w.ptOff+w.size], p)
		w.cur.n += k
		written += k
		p = p[k:]
	}
	return written, w.err
}

// ReadFrom seals everything r holds, reading it straight into chunk
// buffers (io.Copy uses it). It returns the bytes read from r. A read
// error other than io.EOF ends the Writer as a write error does: Close
// then returns it and seals no final chunk, so a source that failed never
// leaves a file that passes for whole.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for w.err == nil {
		if w.cur.n == w.size {
			// cur is full: it is sealed as non-final only once more
			// plaintext is known to follow.
			next := w.job()
			if w.err != nil {
				w.pipe.put(next)
				break
			}
			k, err := io.ReadFull(r, next.buf[w.ptOff:w.ptOff+w.size])
			total += int64(k)
			if k > 0 {
				w.submit(false)
				w.cur = next
				w.cur.n = k
			} else {
				w.pipe.put(next)
			}
			if err != nil {
				return total, w.readEnd(err)
			}
			continue
		}
		k, err := io.ReadFull(r, w.cur.buf[w.ptOff+w.cur.n:w.ptOff+w.size])
		w.cur.n += k
		total += int64(k)
		if err != nil {
			return total, w.readEnd(err)
		}
	}
	return total, w.err
}

// ReadFromAt seals the size bytes src holds from offset 0, as ReadFrom
// would, but each worker reads its own chunks from src (with ReadAt, as
// from an *os.File), so reading the input runs in parallel too. It
// returns once every chunk but the last is written out; the last stays
// in the Writer, for more writes or Close. A read that fails, or comes up
// short (src shrank: io.ErrUnexpectedEOF), ends the Writer as in
// ReadFrom.
func (w *Writer) ReadFromAt(src io.ReaderAt, size int64) (int64, error) {
	var off int64
	for off < size && w.err == nil {
		if w.cur.n == w.size {
			w.next()
			continue
		}
		n := min(int64(w.size-w.cur.n), size-off)
		if w.cur.n > 0 || off+n == size {
			// Topping up a chunk a Write began, or the last piece, which
			// stays current: read here.
			if err := readFullAt(src, w.cur.buf[w.ptOff+w.cur.n:w.ptOff+w.cur.n+int(n)], off); err != nil {
				w.err = fmt.Errorf("sealed: reading the plaintext at byte %d: %w", off, err)
				return off, w.err
			}
			w.cur.n += int(n)
			off += n
			continue
		}
		// A whole chunk with more after it: a worker reads and seals it.
		w.cur.n, w.cur.src, w.cur.at = int(n), src, off
		off += n
		w.next()
	}
	for w.pipe.waiting() > 0 {
		w.flushOne()
	}
	if w.err != nil {
		return off, w.err
	}
	return off, nil
}

// readEnd maps the end of a source read with io.ReadFull: its end is not
// an error; any other failure is the Writer's, sticky.
func (w *Writer) readEnd(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil
	}
	w.err = err
	return err
}

// next submits the full current chunk as non-final and starts another.
func (w *Writer) next() {
	w.submit(false)
	w.cur = w.job()
}

// submit hands the current chunk to the pipeline.
func (w *Writer) submit(final bool) {
	w.cur.index, w.cur.final = w.index, final
	w.index++
	w.pipe.submit(w.cur)
	w.cur = nil
}

// job returns a free chunk buffer, writing out sealed chunks until one is
// free.
func (w *Writer) job() *job {
	for {
		if j := w.pipe.get(); j != nil {
			return j
		}
		w.flushOne()
	}
}

// flushOne writes the oldest sealed chunk to the underlying writer.
func (w *Writer) flushOne() {
	j := w.pipe.oldest()
	if w.err == nil && j.err != nil {
		w.err = j.err
	}
	if w.err == nil {
		if _, err := w.dst.Write(j.buf[:j.n]); err != nil {
			w.err = fmt.Errorf("sealed: writing chunk %d: %w", j.index, err)
		}
	}
	w.pipe.put(j)
}

// Close seals the final chunk and writes out every chunk still held. It
// does not close the underlying writer. After Close, Write fails; Close
// again returns nil, or the error the first one returned.
func (w *Writer) Close() error {
	if w.err == errClosed {
		return nil
	}
	if w.cur != nil {
		if w.err == nil {
			w.submit(true)
		} else {
			w.pipe.put(w.cur)
			w.cur = nil
		}
	}
	for w.pipe.waiting() > 0 {
		w.flushOne()
	}
	w.pipe.stop()
	err := w.err
	w.err = errClosed
	if err != nil {
		w.err = err
	}
	return err
}
