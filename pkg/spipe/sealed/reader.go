package sealed

import (
	"fmt"
	"io"
)

// Reader opens a spipe file from an io.Reader. It returns only
// authenticated plaintext, in order: each chunk is opened (its tag checked
// over the whole chunk) before any of its bytes is returned, and the end
// of the file is io.EOF only after the final chunk, so a file cut short,
// with data appended, or with chunks moved, dropped, duplicated or taken
// from another file fails with a *ChunkError naming the first bad chunk.
// The plaintext of the chunks before it has been returned by then: a
// caller that must not act on a partial file keeps what it reads until
// io.EOF (the spipe tool writes -o files to a temporary name).
//
// A Reader is for one goroutine. Its chunks are opened on
// Options.Workers goroutines, reading ahead at most 2 × Workers + 1 chunks.
// The workers stop at io.EOF, at the first error, at Close, or when the
// Reader is dropped.
type Reader struct {
	src    io.Reader
	header *Header
	pipe   *pipeline
	open   opener
	ptOff  int
	next   uint64 // the index of the next chunk to read from src
	// pending is the last full chunk read: whether it is the final one is
	// known only once the next read shows whether more follows.
	pending *job
	srcDone bool
	cur     *job // the opened chunk being returned
	curOff  int  // how much of cur's plaintext has been returned
	err     error
}

// NewReader reads and checks the header of the file r holds, with s, and
// returns a Reader of its plaintext. opts may be nil; only its Workers
// and Argon2Ceiling matter. The errors are those listed in this package's
// variables: ErrNotSealed, ErrUnsupportedVersion, ErrDamagedHeader,
// ErrMalformedHeader, ErrWrongKey, ErrArgon2Ceiling, ErrTruncated.
func NewReader(r io.Reader, s *Secret, opts *Options) (*Reader, error) {
	var b [HeaderSize]byte
	if err := readHeader(r, b[:]); err != nil {
		return nil, err
	}
	h, c, err := openHeader(b[:], s, opts)
	if err != nil {
		return nil, err
	}
	workers := 0
	if opts != nil {
		workers = opts.Workers
	}
	rd := &Reader{src: r, header: h, open: opener{c, h.ChunkSize}, ptOff: c.ptOff}
	rd.pipe = newPipeline(workerCount(workers), h.ChunkSize+TagSize, rd.open.process)
	stopWhenUnreachable(rd, rd.pipe)
	return rd, nil
}

// Header returns the file's header (checked: its MAC verified).
func (r *Reader) Header() Header { return *r.header }

// Read returns the next plaintext bytes, io.EOF after the final chunk, or
// the first failure (then every later Read returns it).
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !r.ready() {
		return 0, r.err
	}
	n := copy(p, r.plain())
	r.consume(n)
	return n, nil
}

// WriteTo writes the whole plaintext to w, each chunk straight from the
// buffer it was opened in (io.Copy uses it). It returns nil at the end of
// the file, or the first failure.
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for r.ready() {
		n, err := w.Write(r.plain())
		total += int64(n)
		r.consume(n)
		if err != nil {
			return total, err
		}
	}
	if r.err == io.EOF {
		return total, nil
	}
	return total, r.err
}

// Close stops the Reader's workers and gives back its buffers; Read then
// returns an error. It is needed only for a Reader that is left before
// io.EOF or an error, and does not close the underlying reader.
func (r *Reader) Close() error {
	r.stop(errReaderClosed)
	return nil
}

var errReaderClosed = fmt.Errorf("sealed: read from a closed Reader")

// plain is the rest of the current chunk's plaintext.
func (r *Reader) plain() []byte {
	return r.cur.buf[r.ptOff+r.curOff : r.ptOff+r.cur.n-TagSize]
}

// consume marks n bytes of the current chunk returned, and gives the
// chunk back once all of it is.
func (r *Reader) consume(n int) {
	r.curOff += n
	if r.curOff == r.cur.n-TagSize {
		r.pipe.put(r.cur)
		r.cur = nil
	}
}

// ready makes sure a chunk with plaintext left is current, reading and
// opening as needed; false means r.err is set (io.EOF at the end).
func (r *Reader) ready() bool {
	for r.err == nil {
		if r.cur != nil {
			return true
		}
		r.fill()
		j := r.pipe.oldest()
		switch {
		case j == nil:
			r.stop(io.EOF)
		case j.err != nil:
			r.pipe.put(j)
			r.stop(j.err)
		case j.n == TagSize: // the empty plaintext's only chunk
			r.pipe.put(j)
		default:
			r.cur, r.curOff = j, 0
		}
	}
	return false
}

// stop ends the Reader with err.
func (r *Reader) stop(err error) {
	if r.err == nil {
		r.err = err
	}
	r.pipe.stop()
	if r.cur != nil {
		r.pipe.put(r.cur)
		r.cur = nil
	}
}

// fill reads chunks from the source and submits them while buffers are
// free, so the workers always have the next chunks.
func (r *Reader) fill() {
	full := r.open.chunkSize + TagSize
	for !r.srcDone {
		j := r.pipe.get()
		if j == nil {
			return
		}
		j.index = r.next
		k, err := io.ReadFull(r.src, j.buf[:full])
		j.n = k
		switch {
		case k == full:
			r.next++
			r.submitPending(false)
			r.pending = j
			continue
		case err == io.ErrUnexpectedEOF:
			r.submitPending(false)
			j.final = true
			r.pipe.submit(j)
		case err == io.EOF:
			if r.pending != nil {
				r.pipe.put(j)
				r.submitPending(true)
			} else {
				j.err = &ChunkError{Index: j.index, Offset: chunkOffset(j.index, r.open.chunkSize),
					Err: fmt.Errorf("%w: no chunk after the header", ErrTruncated)}
				r.pipe.submit(j)
			}
		default:
			// A read failure: the chunk before it is opened as a
			// non-final one (if it is authentic, its place is), then the
			// failure is reported in order.
			r.submitPending(false)
			j.err = &ChunkError{Index: j.index, Offset: chunkOffset(j.index, r.open.chunkSize), Err: err}
			r.pipe.submit(j)
		}
		r.srcDone = true
	}
}

// submitPending submits the pending full chunk, if any, with its
// finality now known.
func (r *Reader) submitPending(final bool) {
	if r.pending != nil {
		r.pending.final = final
		r.pipe.submit(r.pending)
		r.pending = nil
	}
}
