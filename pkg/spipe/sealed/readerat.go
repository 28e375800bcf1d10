package sealed

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/spipe-dev/spipe/pkg/aead"
)

// ReaderAt opens any range of a spipe file held by an io.ReaderAt (an
// *os.File, a bytes.Reader, an HTTP range client) reading and opening only
// the chunks that cover it. Its plaintext size comes from the file's size
// and is authenticated when the ReaderAt is made, by opening the final
// chunk, so a file cut short or with data appended fails then, at a cost
// that does not grow with the file.
//
// It is an io.ReaderAt with a Size, so io.NewSectionReader,
// http.ServeContent (through a SectionReader) and archive/zip.NewReader
// work on encrypted files directly. Each ReadAt returns only
// authenticated plaintext; a chunk that fails gives a *ChunkError and no
// byte of it. Any number of goroutines may call ReadAt at once.
type ReaderAt struct {
	src     io.ReaderAt
	header  *Header
	open    opener
	size    int64 // plaintext
	chunks  int64
	workers int // for WriteRangeTo
	// bufs holds chunk buffers, each remembering which chunk's plaintext
	// it holds, so that consecutive small reads of one chunk (io.Copy's
	// 32 KiB through a SectionReader) open it once.
	bufs sync.Pool
}

// chunkBuf is a pooled chunk buffer and the chunk whose plaintext it holds.
type chunkBuf struct {
	buf   []byte
	index int64 // -1: none
	nonce [aead.NonceSizeX]byte
}

// NewReaderAt checks the header of the file of `size` bytes that src
// holds, with s, and the file's final chunk, and returns a ReaderAt of its
// plaintext. opts may be nil; only its Workers (for WriteRangeTo) and
// Argon2Ceiling matter. The errors are NewReader's, and ErrTruncated or
// ErrTrailingData (in a *ChunkError) when the size does not match an
// authentic final chunk.
func NewReaderAt(src io.ReaderAt, size int64, s *Secret, opts *Options) (*ReaderAt, error) {
	var b [HeaderSize]byte
	if err := readHeader(io.NewSectionReader(src, 0, size), b[:]); err != nil {
		return nil, err
	}
	h, c, err := openHeader(b[:], s, opts)
	if err != nil {
		return nil, err
	}
	r := &ReaderAt{src: src, header: h, open: opener{c, h.ChunkSize}}
	if opts != nil {
		r.workers = opts.Workers
	}
	r.bufs.New = func() any { return &chunkBuf{buf: make([]byte, h.ChunkSize+TagSize), index: -1} }
	chunks, last, ok := layout(size, h.ChunkSize)
	if !ok {
		return nil, r.diagnose(size, chunks, last)
	}
	r.chunks = chunks
	r.size = size - HeaderSize - TagSize*chunks
	// Opening the final chunk authenticates the size.
	cb := r.bufs.Get().(*chunkBuf)
	defer r.bufs.Put(cb)
	if err := r.load(cb, chunks-1); err != nil {
		if chunks > 1 && errors.Is(err, ErrTampered) {
			return nil, r.diagnose(size, chunks, last)
		}
		return nil, err
	}
	return r, nil
}

// Header returns the file's header (checked: its MAC verified).
func (r *ReaderAt) Header() Header { return *r.header }

// Size returns the plaintext size.
func (r *ReaderAt) Size() int64 { return r.size }

// ReadAt reads len(p) plaintext bytes from off, opening each chunk that
// covers them. It follows io.ReaderAt: fewer than len(p) bytes come with
// an error, io.EOF at the end of the plaintext.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("sealed: ReadAt at negative offset %d", off)
	}
	if off >= r.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := p
	if rest := r.size - off; int64(len(want)) > rest {
		want = want[:rest]
	}
	cs := int64(r.header.ChunkSize)
	var cb *chunkBuf
	defer func() {
		if cb != nil {
			r.bufs.Put(cb)
		}
	}()
	n := 0
	for n < len(want) {
		pos := off + int64(n)
		index, within := pos/cs, int(pos%cs)
		plainLen := int(min(cs, r.size-index*cs))
		if cb == nil {
			cb = r.bufs.Get().(*chunkBuf)
		}
		if cb.index != index && within == 0 && len(want)-n >= plainLen {
			// A whole chunk: open it straight into p.
			if err := r.loadTo(cb, index, want[n:n]); err != nil {
				return n, err
			}
			n += plainLen
			continue
		}
		if cb.index != index {
			if err := r.load(cb, index); err != nil {
				return n, err
			}
		}
		n += copy(want[n:], cb.buf[r.open.c.ptOff+within:r.open.c.ptOff+plainLen])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// sealedLen is the sealed size of chunk index.
func (r *ReaderAt) sealedLen(index int64) int {
	cs := int64(r.header.ChunkSize)
	return int(min(cs, r.size-index*cs)) + TagSize
}

// read reads the sealed chunk index into cb's buffer, returning its
// length.
func (r *ReaderAt) read(cb *chunkBuf, index int64) (int, error) {
	cb.index = -1
	n := r.sealedLen(index)
	at := chunkOffset(uint64(index), r.header.ChunkSize)
	if _, err := r.src.ReadAt(cb.buf[:n], at); err != nil {
		if err == io.EOF {
			err = fmt.Errorf("%w: the file shrank while open", ErrTruncated)
		}
		return 0, &ChunkError{Index: uint64(index), Offset: at, Err: err}
	}
	return n, nil
}

// load reads and opens chunk index in place in cb.
func (r *ReaderAt) load(cb *chunkBuf, index int64) error {
	n, err := r.read(cb, index)
	if err != nil {
		return err
	}
	if err := r.open.open(cb.buf, n, uint64(index), index == r.chunks-1, &cb.nonce); err != nil {
		return &ChunkError{Index: uint64(index), Offset: chunkOffset(uint64(index), r.header.ChunkSize), Err: err}
	}
	cb.index = index
	return nil
}

// loadTo reads chunk index into cb and opens it into dst's capacity.
func (r *ReaderAt) loadTo(cb *chunkBuf, index int64, dst []byte) error {
	n, err := r.read(cb, index)
	if err != nil {
		return err
	}
	if err := r.open.c.openTo(dst, cb.buf[:n], uint64(index), index == r.chunks-1, &cb.nonce); err != nil {
		// Opened again in place for the diagnosis the error carries.
		return &ChunkError{Index: uint64(index), Offset: chunkOffset(uint64(index), r.header.ChunkSize),
			Err: r.open.open(cb.buf, n, uint64(index), index == r.chunks-1, &cb.nonce)}
	}
	return nil
}

// diagnose explains a file whose size no whole file has, or whose final
// chunk by its size fails: if the chunk before that opens as the final
// one, data was appended after it; otherwise the file was cut short (or
// its last chunk is damaged, which the open of it says).
func (r *ReaderAt) diagnose(size, chunks, last int64) error {
	cs := int64(r.header.ChunkSize)
	full := cs + TagSize
	cb := r.bufs.Get().(*chunkBuf)
	defer r.bufs.Put(cb)
	if chunks > 1 {
		prev := chunks - 2
		at := chunkOffset(uint64(prev), r.header.ChunkSize)
		if _, err := r.src.ReadAt(cb.buf[:full], at); err == nil &&
			r.open.c.open(cb.buf, int(full), uint64(prev), true, &cb.nonce) == nil {
			return &ChunkError{Index: uint64(prev), Offset: at,
				Err: fmt.Errorf("%w: %d bytes follow the final chunk", ErrTrailingData, size-at-full)}
		}
	}
	at := chunkOffset(uint64(max(chunks-1, 0)), r.header.ChunkSize)
	if last <= TagSize {
		return &ChunkError{Index: uint64(max(chunks-1, 0)), Offset: at,
			Err: fmt.Errorf("%w: %d bytes left for the final chunk, too few to be one", ErrTruncated, max(last, 0))}
	}
	// The size is possible but the chunk it makes final does not open as
	// final: opening it again says whether it is a non-final chunk.
	n := int(last)
	if _, err := r.src.ReadAt(cb.buf[:n], at); err != nil {
		return &ChunkError{Index: uint64(chunks - 1), Offset: at, Err: err}
	}
	return &ChunkError{Index: uint64(chunks - 1), Offset: at, Err: r.open.open(cb.buf, n, uint64(chunks-1), true, &cb.nonce)}
}

// WriteRangeTo writes n plaintext bytes from off (fewer if the plaintext
// ends first) to w, in order, reading and opening the chunks that cover
// them on Options.Workers goroutines at once, each reading its own chunks
// from the source, with at most 2 × Workers + 1 chunks in memory. It
// stops at the first chunk that fails, having written only the
// authenticated chunks before it.
func (r *ReaderAt) WriteRangeTo(w io.Writer, off, n int64) (int64, error) {
	if off < 0 || n < 0 {
		return 0, fmt.Errorf("sealed: WriteRangeTo(%d, %d): negative range", off, n)
	}
	end := min(off+n, r.size)
	if off >= end {
		return 0, nil
	}
	cs := int64(r.header.ChunkSize)
	first, last := off/cs, (end-1)/cs
	ro := rangeOpener{r}
	pipe := newPipeline(workerCount(r.workers), r.header.ChunkSize+TagSize, ro.process)
	defer pipe.stop()
	var written int64
	next := first
	for {
		for next <= last {
			j := pipe.get()
			if j == nil {
				break
			}
			j.index, j.src, j.at = uint64(next), r.src, chunkOffset(uint64(next), r.header.ChunkSize)
			j.n, j.final = r.sealedLen(next), next == r.chunks-1
			pipe.submit(j)
			next++
		}
		j := pipe.oldest()
		if j == nil {
			return written, nil
		}
		if j.err != nil {
			return written, j.err
		}
		start := int64(j.index) * cs
		lo, hi := max(off, start)-start, min(end, start+cs)-start
		k, err := w.Write(j.buf[r.open.c.ptOff+int(lo) : r.open.c.ptOff+int(hi)])
		written += int64(k)
		pipe.put(j)
		if err != nil {
			return written, err
		}
	}
}

// rangeOpener is WriteRangeTo's work: read a chunk from the source, then
// open it.
type rangeOpener struct{ r *ReaderAt }

func (o rangeOpener) process(j *job) {
	if err := readJob(j, j.buf[:j.n]); err != nil {
		if err == io.ErrUnexpectedEOF {
			err = fmt.Errorf("%w: the file shrank while open", ErrTruncated)
		}
		j.err = &ChunkError{Index: j.index, Offset: j.at, Err: err}
		return
	}
	o.r.open.process(j)
}
