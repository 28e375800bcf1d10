package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// bufSize is the buffer of a copy between two plaintext connections (the
// benchmarks' relay pair, spipe's engine with encryption off). Copies into
// and out of a spipe connection go through its frame buffers instead.
const bufSize = 64 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

var (
	errShutdown = errors.New("closed at shutdown")
	errIdle     = errors.New("idle timeout")
)

// TransferError says which side of a forwarded connection failed, and how.
type TransferError struct {
	Side string // "client" (accepted side) or "target" (dialled side)
	Op   string // "read", "write" or "close-write"
	Err  error
}

// Error returns "side op: err", e.g. "client read: spipe: frame failed
// authentication ...".
func (e *TransferError) Error() string { return fmt.Sprintf("%s %s: %v", e.Side, e.Op, e.Err) }

// Unwrap returns the underlying error, so errors.Is sees protocol
// sentinels and syscall errors through it.
func (e *TransferError) Unwrap() error { return e.Err }

// pipe copies in→out and out→in until both directions have ended. An EOF
// on one side becomes a CloseWrite on the other (for the direction that
// ends last into a TCP socket, the close that follows: see endCopy), so
// each direction ends on its own; any error ends both at once. in and out
// are closed on return. obs hears of the bytes forwarded.
func (f *Forwarder) pipe(ctx context.Context, in, out Conn, obs Observer, w *workers) (up, down int64, err error) {
	var ab aborter
	ab.conns = [2]Conn{in, out}
	stop := context.AfterFunc(ctx, func() { ab.abort(errShutdown) })
	defer stop()
	var idle *idleWatch
	if f.IdleTimeout > 0 {
		idle = newIdleWatch(f.IdleTimeout, func() { ab.abort(errIdle) })
		defer idle.stop()
	}

	// Each direction aborts both at once on its own error: the other one
	// may be blocked in a Read that only the close ends. The direction
	// from the accepted side runs here, the other on a worker: the client
	// usually speaks first, so its first bytes are forwarded without
	// waiting for a worker, and a stream's open goes out with them (a
	// stream read from before it is written to is announced alone: see
	// mux.Stream's WriteTo).
	var shut [2]atomic.Bool // in's and out's write halves, shut by the other direction
	downDone := make(chan struct{})
	w.run(func() {
		defer close(downDone)
		var err error
		if down, err = f.copyHalf(in, out, false, obs, idle, halves{src: &shut[1], dst: &shut[0]}); err != nil {
			ab.abort(err)
		}
	})
	var upErr error
	if up, upErr = f.copyHalf(out, in, true, obs, idle, halves{src: &shut[0], dst: &shut[1]}); upErr != nil {
		ab.abort(upErr)
	}
	<-downDone
	in.Close()
	out.Close()
	return up, down, ab.err()
}

// halves records, for one direction of a pipe, whether its source's write
// half has been shut (by the other direction) and marks its destination's
// before shutting it: once a socket has sent its FIN, the state
// resetAfterEOF reads is no evidence of a reset any more (a socket that
// receives the peer's FIN after sending its own goes to CLOSE as well, as
// it hands over to TIME_WAIT).
type halves struct{ src, dst *atomic.Bool }

// copyHalf copies src to dst until src ends, then half-closes dst.
func (f *Forwarder) copyHalf(dst, src Conn, toTarget bool, obs Observer, idle *idleWatch, h halves) (int64, error) {
	srcSide, dstSide := "client", "target"
	if !toTarget {
		srcSide, dstSide = dstSide, srcSide
	}
	if fw, ok := framed(dst); ok {
		return copyIntoFrames(fw, src, toTarget, idle, obs, h, srcSide, dstSide)
	}
	if fr, ok := framedSource(src); ok {
		return copyFromFrames(dst, fr, toTarget, idle, obs, h, srcSide, dstSide)
	}
	pool := &bufPool
	if f.PlainCopyBuffer > 0 {
		pool = &f.plainBufs
	}
	bp, _ := pool.Get().(*[]byte)
	if bp == nil { // plainBufs has no New: its size is the Forwarder's
		b := make([]byte, f.PlainCopyBuffer)
		bp = &b
	}
	defer pool.Put(bp)
	buf := *bp
	var n int64
	for {
		nr, rerr := src.Read(buf)
		if nr > 0 {
			idle.touch()
			nw, werr := dst.Write(buf[:nr])
			n += int64(nw)
			obs.Bytes(toTarget, nw)
			if werr != nil {
				return n, &TransferError{Side: dstSide, Op: "write", Err: werr}
			}
			idle.touch()
		}
		if rerr == io.EOF {
			return endCopy(dst, n, sourceEnd(src, h), nil, h, srcSide, dstSide)
		}
		if rerr != nil {
			return n, &TransferError{Side: srcSide, Op: "read", Err: rerr}
		}
	}
}

// sourceEnd is how a copy's source ended when its read returned EOF: nil
// for a clean end, or ECONNRESET for a TCP connection that was in fact
// reset (see resetAfterEOF), so that a cut stream is never forwarded as a
// complete one. Once the source's own write half is shut, a reset would
// reach this read as an error (no write is left to take it), so then EOF
// is a clean end.
func sourceEnd(src Conn, h halves) error {
	if !h.src.Load() && resetAfterEOF(src) {
		return syscall.ECONNRESET
	}
	return nil
}

// endCopy ends a copy of n bytes into dst: with the source's error (srcErr)
// or the destination's (dstErr) as a TransferError naming its side, or, if
// both are nil (the source ended), by half-closing dst, unless the pipe's
// close of dst right after does the same (closeSendsFIN).
func endCopy(dst Conn, n int64, srcErr, dstErr error, h halves, srcSide, dstSide string) (int64, error) {
	switch {
	case srcErr != nil:
		return n, &TransferError{Side: srcSide, Op: "read", Err: srcErr}
	case dstErr != nil:
		return n, &TransferError{Side: dstSide, Op: "write", Err: dstErr}
	}
	h.dst.Store(true)
	if h.src.Load() && closeSendsFIN(dst) {
		// The other direction has ended in order too, and the pipe
		// closes dst as soon as it has returned: the close sends the
		// FIN, and a shutdown first would only cost a system call.
		return n, nil
	}
	if err := dst.CloseWrite(); err != nil {
		return n, &TransferError{Side: dstSide, Op: "close-write", Err: err}
	}
	return n, nil
}

// closeSendsFIN reports whether closing c ends its sending half as
// CloseWrite does: a TCP socket read to its end (as both directions of a
// pipe that ended in order leave it) sends a FIN when closed, not a reset.
// A spipe connection's or stream's end is a message of its own, which
// Close does not send.
func closeSendsFIN(c Conn) bool {
	_, ok := c.(*net.TCPConn)
	return ok
}

// frameWriter is a destination that sends what its ReadFrom reads in
// units of its own: a spipe connection's frames, a mux stream's messages.
type frameWriter interface {
	Conn
	io.ReaderFrom
}

// framed returns dst as a frameWriter if it is one: a *spipe.Conn, or a
// stream of a multiplexed carrier, whose ReadFrom reads exactly what one
// frame holds (a copy loop's 64 KiB would cost a second, tiny frame for
// every read, and cap bulk frames at 64 KiB).
func framed(dst Conn) (frameWriter, bool) {
	switch d := dst.(type) {
	case *spipe.Conn, *mux.Stream, *poolStream:
		return d.(frameWriter), true
	}
	return nil, false
}

// framedSource returns src as an io.WriterTo if it is a *spipe.Conn or a
// stream of a multiplexed carrier, whose WriteTo writes what it received
// straight from its own buffer (a frame opened in place, or the stream's
// buffer).
func framedSource(src Conn) (io.WriterTo, bool) {
	switch s := src.(type) {
	case *spipe.Conn, *mux.Stream, *poolStream:
		return s.(io.WriterTo), true
	}
	return nil, false
}

// copyIntoFrames is copyHalf toward a spipe connection or stream: its
// ReadFrom reads src straight into each frame (or message), so the
// plaintext passes through no buffer of ours. src is wrapped to keep what
// copyHalf does per chunk (idle clock, byte count) and to tell src's
// errors from the connection's.
func copyIntoFrames(dst frameWriter, src Conn, toTarget bool, idle *idleWatch, obs Observer, h halves, srcSide, dstSide string) (int64, error) {
	r := &watchedReader{r: src, idle: idle, obs: obs, toTarget: toTarget}
	n, err := dst.ReadFrom(r)
	obs.Bytes(toTarget, int(n-r.counted))
	if r.err != nil {
		err = nil // ReadFrom's error is src's own
	} else if err == nil {
		r.err = sourceEnd(src, h) // src ended: cleanly, or was it reset?
	}
	return endCopy(dst, n, r.err, err, h, srcSide, dstSide)
}

// watchedReader is the source of a ReadFrom. ReadFrom asks for more only
// after it has sent what it read, so each Read also reports the previous
// chunk as forwarded.
type watchedReader struct {
	r        Conn
	idle     *idleWatch
	obs      Observer
	toTarget bool
	pending  int   // read, not yet known to be sent
	counted  int64 // reported to obs
	err      error // the source's own error, io.EOF aside
}

// SyscallConn gives the source's socket, if it has one, so a stream's
// ReadFrom can see whether data is already waiting (it sends the stream's
// open with its first data then, alone at once otherwise). What is read
// is still read through Read.
func (w *watchedReader) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := w.r.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errNoSocket
}

// errNoSocket is a source without a socket of its own (a stdio stream).
var errNoSocket = errors.New("not a socket")

func (w *watchedReader) Read(p []byte) (int, error) {
	if w.pending > 0 {
		w.idle.touch()
		w.obs.Bytes(w.toTarget, w.pending)
		w.counted += int64(w.pending)
		w.pending = 0
	}
	n, err := w.r.Read(p)
	if n > 0 {
		w.idle.touch()
		w.pending = n
	}
	if err != nil && err != io.EOF {
		w.err = err
	}
	return n, err
}

// copyFromFrames is copyHalf from a spipe connection or a stream: its
// WriteTo writes the data to dst straight from where it was received (a
// spipe connection opens each frame in place; a stream writes from its
// buffer), so the plaintext passes through no buffer of ours, and a frame
// larger than one (the tool's large frames, see pkg/spipe's tiers) is
// still one write. dst is wrapped to keep what copyHalf does per chunk
// (idle clock, byte count) and to tell dst's errors from the
// connection's.
func copyFromFrames(dst Conn, src io.WriterTo, toTarget bool, idle *idleWatch, obs Observer, h halves, srcSide, dstSide string) (int64, error) {
	w := &watchedWriter{w: dst, idle: idle, obs: obs, toTarget: toTarget}
	n, err := src.WriteTo(w)
	if w.err != nil {
		err = nil // WriteTo's error is dst's own
	}
	return endCopy(dst, n, err, w.err, h, srcSide, dstSide)
}

// watchedWriter is the destination of a WriteTo: each write is activity
// and forwarded bytes.
type watchedWriter struct {
	w        Conn
	idle     *idleWatch
	obs      Observer
	toTarget bool
	err      error // the destination's own error
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	w.idle.touch()
	n, err := w.w.Write(p)
	if n > 0 {
		w.idle.touch()
		w.obs.Bytes(w.toTarget, n)
	}
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = err
	}
	return n, err
}

// aborter closes both sides once, on the first error, and keeps every
// error reported; err picks the cause among them.
type aborter struct {
	mu      sync.Mutex
	errs    []error
	aborted bool
	conns   [2]Conn
}

func (a *aborter) abort(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.errs = append(a.errs, err)
	if a.aborted {
		return
	}
	a.aborted = true
	for _, c := range a.conns {
		abortConn(c)
	}
}

// err is why the pipe ended: the first error reported that is not an
// echo, nil if none was. An echo is an operation on a connection that
// was closed under it, which the abort does to both sides at once, and
// which a spipe connection does to its socket when its read fails: the
// error that caused the close is the cause, even if the echo was
// reported first. And a truncation is explained by a side leaving
// (peerLeft) reported after it on the same side: Linux gives a reset to
// whichever call meets it first, so when a write to a spipe peer takes
// the reset, the read meets a plain end and reports a truncation.
func (a *aborter) err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var cause error
	for _, err := range a.errs {
		switch {
		case isEcho(err):
		case cause == nil:
			cause = err
		case errors.Is(cause, spipe.ErrTruncated) && peerLeft(err) && sameSide(cause, err):
			cause = err
		}
	}
	if cause == nil && len(a.errs) > 0 {
		cause = a.errs[0]
	}
	return cause
}

// isEcho reports whether err is an operation on a connection closed under
// it.
func isEcho(err error) bool { return errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed) }

// sameSide reports whether a and b are transfer errors of the same side.
func sameSide(a, b error) bool {
	ta, ok := errors.AsType[*TransferError](a)
	tb, ok2 := errors.AsType[*TransferError](b)
	return ok && ok2 && ta.Side == tb.Side
}

// abortConn closes c so that its peer cannot take the cut stream for a
// complete one: a protocol connection is closed under its feet, without
// its authenticated close, and a TCP socket is reset rather than ended
// with a FIN.
func abortConn(c Conn) {
	// Down to the socket: a protocol connection may sit on a wrapper (the
	// first-message watch) that sits on it.
	var raw net.Conn = c
	for {
		nc, ok := raw.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		raw = nc.NetConn()
	}
	if l, ok := raw.(interface{ SetLinger(int) error }); ok {
		_ = l.SetLinger(0)
	}
	raw.Close()
	c.Close()
}

// idleWatch fires once nothing has been touched for d. It uses a single
// timer that re-arms itself for the remaining time, so activity costs one
// atomic store, not a timer reset.
type idleWatch struct {
	d       time.Duration
	base    time.Time
	last    atomic.Int64 // since base
	stopped atomic.Bool
	t       *time.Timer
	fire    func()
}

func newIdleWatch(d time.Duration, fire func()) *idleWatch {
	w := &idleWatch{d: d, base: time.Now(), fire: fire}
	w.t = time.AfterFunc(d, w.check)
	return w
}

func (w *idleWatch) touch() {
	if w != nil {
		w.last.Store(int64(time.Since(w.base)))
	}
}

func (w *idleWatch) check() {
	if w.stopped.Load() {
		return
	}
	idle := time.Since(w.base) - time.Duration(w.last.Load())
	if idle >= w.d {
		w.fire()
		return
	}
	w.t.Reset(w.d - idle)
}

func (w *idleWatch) stop() {
	w.stopped.Store(true)
	w.t.Stop()
}
