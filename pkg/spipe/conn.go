package spipe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe/frame"
	"github.com/spipe-dev/spipe/pkg/spipe/internal/pool"
)

// readAhead is how much beyond one maximal frame the reader buffers, so one
// read system call can bring in several small frames.
const readAhead = 32 << 10

// aLongTimeAgo is a deadline in the past, to interrupt blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// Conn is one end of a secure pipe over a net.Conn, like crypto/tls.Conn.
// The handshake runs on the first Read or Write, or explicitly through
// Handshake or HandshakeContext. One goroutine may Read while another
// Writes; Close unblocks both.
//
// # Ending a stream
//
// Only CloseWrite ends a direction cleanly: it sends the authenticated
// close-write frame, after which the peer's Read returns io.EOF. Close
// never sends it, so a peer that did not get CloseWrite first sees
// ErrTruncated: a connection abandoned on an error path (defer c.Close())
// is never taken for a complete stream. The pattern for a complete
// transfer is to copy, call CloseWrite, then Close.
//
// Once Read has returned an error other than a timeout (ErrTampered,
// ErrTruncated, ...), the connection is dead: the underlying connection is
// closed and every later call fails. Read never returns bytes of a frame
// that did not authenticate. A timeout on Read leaves the connection
// usable; a timeout on Write does not (part of a frame may have been sent).
type Conn struct {
	conn     net.Conn
	config   *Config
	isClient bool

	hsMu   sync.Mutex
	hsDone atomic.Bool
	hsErr  error
	state  ConnectionState

	closed  atomic.Bool
	carried atomic.Bool // a multiplexed connection's frames were handed to package mux

	dlMu            sync.Mutex
	readDL, writeDL time.Time // the user's deadlines, restored after the handshake

	in  inbound
	out outbound
}

// inbound is the receiving direction, guarded by its mutex.
type inbound struct {
	mu         sync.Mutex
	fc         *frame.Cipher
	counter    uint64
	limit      int     // the largest payload (inner plaintext) accepted
	smallSize  int     // the length of a small-tier buffer (see tiers)
	bigSize    int     // the length of a big-tier one
	box        *[]byte // the pooled buffer buf is, nil until first used
	buf        []byte  // raw bytes from the wire: [start, end) not yet consumed
	start, end int
	short      bool   // the last read from the wire returned less than it asked for
	data       []byte // authenticated plaintext not yet returned (aliases buf)
	err        error  // sticky; io.EOF after an authenticated close
}

// outbound is the sending direction, guarded by its mutex.
type outbound struct {
	mu        sync.Mutex
	fc        *frame.Cipher
	counter   uint64
	maxData   int // data bytes per frame the peer's limit allows
	padTo     int
	smallSize int     // the length of a small-tier buffer (see tiers)
	bigSize   int     // the length of a big-tier one
	box       *[]byte // the small-tier buffer, nil until first used
	err       error   // sticky
	closed    bool    // close-write sent
}

// ConnectionState describes a connection after its handshake.
type ConnectionState struct {
	// HandshakeComplete is true once the handshake has succeeded; the
	// other fields are meaningful only then.
	HandshakeComplete bool
	// Version is the protocol version.
	Version int
	// Suite is the cipher suite sealing the frames.
	Suite aead.Suite
	// ForwardSecrecy reports whether the session keys include an X25519
	// secret.
	ForwardSecrecy bool
	// KeyIndex is, on a server, the index in Config.Keys of the key the
	// client proved; 0 on a client.
	KeyIndex int
	// MaxPayload is the largest payload (inner plaintext: data, type byte
	// and padding) this side sends in one frame.
	MaxPayload int
	// Multiplexed reports whether the connection runs the multiplexed
	// mode (Config.Multiplex, mode 3): then its frames carry streams, run
	// by package [github.com/spipe-dev/spipe/pkg/spipe/mux], and Read,
	// Write, ReadFrom, WriteTo, CloseWrite and SendKeepalive fail; only
	// Close and the address and deadline methods apply to it directly.
	Multiplexed bool
}

// Client returns the client end of a secure pipe over conn. The handshake
// happens on the first Read or Write, or on Handshake. Config errors are
// reported then. The Conn owns conn from now on.
func Client(conn net.Conn, config *Config) *Conn {
	return &Conn{conn: conn, config: config, isClient: true}
}

// Server returns the server end of a secure pipe over conn. Its handshake
// completes only after the client has proven it holds one of config.Keys
// (under config.Context). The Conn owns conn from now on.
func Server(conn net.Conn, config *Config) *Conn {
	return &Conn{conn: conn, config: config}
}

// Handshake runs the handshake if it has not run yet, bounded by the
// Config's HandshakeTimeout; see HandshakeContext.
func (c *Conn) Handshake() error { return c.HandshakeContext(context.Background()) }

// HandshakeContext runs the handshake if it has not run yet, bounded by ctx
// and by the Config's HandshakeTimeout. On failure the underlying
// connection is closed and the error (wrapping one of the package's
// sentinels, a context error or an I/O error) is returned by this and
// every later call. A server's handshake succeeds only after the client
// proved its key; nothing is sent to a peer whose handshake fails.
func (c *Conn) HandshakeContext(ctx context.Context) error {
	c.hsMu.Lock()
	defer c.hsMu.Unlock()
	if c.hsDone.Load() {
		return nil
	}
	if c.hsErr != nil {
		return c.hsErr
	}
	if err := c.handshake(ctx); err != nil {
		c.hsErr = fmt.Errorf("spipe: handshake: %w", err)
		c.conn.Close()
		return c.hsErr
	}
	c.hsDone.Store(true)
	return nil
}

func (c *Conn) handshake(ctx context.Context) error {
	s, err := c.config.settings()
	if err != nil {
		return err
	}
	if c.closed.Load() {
		return net.ErrClosed
	}
	if s.handshakeTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.handshakeTimeout)
		defer cancel()
	}
	if dl, ok := ctx.Deadline(); ok {
		c.conn.SetDeadline(dl)
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.conn.SetDeadline(aLongTimeAgo)
		close(fired)
	})
	var res *handshakeResult
	if c.isClient {
		res, err = clientHandshake(c.conn, s)
	} else {
		res, err = serverHandshake(c.conn, s)
	}
	if !stop() {
		<-fired
		if err != nil {
			err = ctx.Err()
		}
	} else if isTimeout(err) {
		// The connection's deadline (the context's) fired just before the
		// context noticed; report it the same way.
		err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	c.dlMu.Lock()
	c.conn.SetReadDeadline(c.readDL)
	c.conn.SetWriteDeadline(c.writeDL)
	c.dlMu.Unlock()
	if err != nil {
		return err
	}
	return c.install(s, res)
}

// install sets up both directions from a completed handshake.
func (c *Conn) install(s *settings, res *handshakeResult) error {
	defer clear(res.sendKey)
	defer clear(res.recvKey)
	var err error
	if c.out.fc, err = frame.NewCipher(res.suite, res.sendKey); err != nil {
		return err
	}
	if c.in.fc, err = frame.NewCipher(res.suite, res.recvKey); err != nil {
		return err
	}
	c.in.limit = s.maxPayload
	c.in.smallSize = readBufSize(smallPayload(s.maxPayload, 0))
	c.in.bigSize = readBufSize(s.maxPayload)
	// Send buffers are sized from this side's own limit, never from the
	// peer's (see bufPools): a frame never needs more.
	c.out.smallSize = writeBufSize(smallPayload(s.maxPayload, s.padTo))
	c.out.bigSize = writeBufSize(s.maxPayload)
	// Each frame's payload holds its data and one type byte; padded, the
	// payload is a whole number of pad units.
	c.out.maxData = res.sendLimit - 1
	if s.padTo > 0 {
		pad := min(s.padTo, res.sendLimit)
		c.out.padTo = pad
		c.out.maxData = res.sendLimit/pad*pad - 1
	}
	c.state = ConnectionState{
		HandshakeComplete: true,
		Version:           Version,
		Suite:             res.suite,
		ForwardSecrecy:    res.forwardSecrecy,
		KeyIndex:          res.keyIndex,
		MaxPayload:        res.sendLimit,
		Multiplexed:       res.mode == modeMux,
	}
	return nil
}

func (c *Conn) handshakeOnce() error {
	if c.hsDone.Load() {
		return nil
	}
	return c.HandshakeContext(context.Background())
}

// byteStream runs the handshake if needed and fails if the connection
// runs the multiplexed mode, whose frames are the stream layer's.
func (c *Conn) byteStream() error {
	if err := c.handshakeOnce(); err != nil {
		return err
	}
	if c.state.Multiplexed {
		return errMultiplexed
	}
	return nil
}

// ConnectionState returns the negotiated parameters (zero before the
// handshake completes).
func (c *Conn) ConnectionState() ConnectionState {
	if !c.hsDone.Load() {
		return ConnectionState{}
	}
	return c.state
}

// Read reads authenticated stream bytes into p. It returns io.EOF after the
// peer's authenticated close-write, and a sentinel error (ErrTampered,
// ErrTruncated, ErrFrameTooLarge, ErrMalformedFrame, ErrCounterExhausted)
// if the stream cannot be trusted, after which the connection is dead.
func (c *Conn) Read(p []byte) (int, error) {
	if err := c.byteStream(); err != nil {
		return 0, err
	}
	in := &c.in
	in.mu.Lock()
	defer in.mu.Unlock()
	for len(in.data) == 0 {
		if in.err != nil {
			return 0, in.err
		}
		if len(p) == 0 {
			return 0, nil
		}
		n, err := c.readFrame(p)
		if err != nil {
			return 0, err
		}
		if n > 0 {
			return n, nil
		}
	}
	n := copy(p, in.data)
	in.data = in.data[n:]
	return n, nil
}

// readFrame reads, authenticates and consumes one frame. If its payload
// fits in p, it is opened straight into p (nothing is written there unless
// the tag is valid; a control frame's type byte lands in p as scratch, as
// io.Reader allows) and the data's length is returned; otherwise its data,
// if any, is left in in.data and 0 returned. in.mu is held.
func (c *Conn) readFrame(p []byte) (int, error) {
	in := &c.in
	f, err := c.nextSealed()
	if err != nil {
		return 0, err
	}
	off := in.fc.DataOffset()
	dst := f[off:off] // in place
	direct := len(f)-frame.Overhead <= len(p)
	if direct {
		dst = p[:0] // saves copying the data out afterwards
	}
	t, data, err := c.openSealed(dst, f)
	if err != nil {
		return 0, err
	}
	switch {
	case t > frame.Keepalive:
		return 0, c.failRead(fmt.Errorf("spipe: read: frame %d: %w: %s frame outside the multiplexed mode", in.counter-1, ErrMalformedFrame, t))
	case t == frame.Data && direct:
		return len(data), nil
	case t == frame.Data:
		in.data = data
	case t == frame.CloseWrite:
		in.err = io.EOF
		c.releaseReadBuf()
	}
	return 0, nil
}

// nextSealed reads the next frame into the receive buffer, checks its
// size and the counter, and returns it, still sealed, at
// in.buf[in.start:]. in.mu is held.
func (c *Conn) nextSealed() ([]byte, error) {
	in := &c.in
	if err := c.fill(frame.HeaderSize); err != nil {
		return nil, err
	}
	n, err := frame.Size(in.buf[in.start:])
	if err == nil && n-frame.Overhead > in.limit {
		err = frame.ErrTooLarge
	}
	if err != nil {
		return nil, c.failRead(fmt.Errorf("spipe: read: frame %d: %w", in.counter, err))
	}
	if err := c.fill(n); err != nil {
		return nil, err
	}
	if in.counter > frame.MaxCounter {
		return nil, c.failRead(fmt.Errorf("spipe: read: %w", ErrCounterExhausted))
	}
	return in.buf[in.start : in.start+n], nil
}

// openSealed opens f, the frame nextSealed returned, into dst and
// consumes it. in.mu is held.
func (c *Conn) openSealed(dst, f []byte) (frame.Type, []byte, error) {
	in := &c.in
	t, body, err := in.fc.Open(dst, f, in.counter)
	if err != nil {
		return 0, nil, c.failRead(fmt.Errorf("spipe: read: frame %d: %w", in.counter, err))
	}
	in.counter++
	in.start += len(f)
	return t, body, nil
}

// fill makes at least n raw bytes available at in.buf[in.start:]. A timeout
// is returned as is and leaves the partial frame buffered for the next Read.
func (c *Conn) fill(n int) error {
	in := &c.in
	if in.end-in.start >= n {
		return nil
	}
	if in.start == in.end {
		in.start, in.end = 0, 0
		// Everything read is consumed, and the last read emptied the
		// socket: the stream may pause here, so it waits on the small
		// tier.
		if in.short && len(in.buf) > in.smallSize {
			c.useReadBuf(in.smallSize)
		}
	}
	if in.box == nil {
		in.box = pool.Get(in.smallSize)
		in.buf = *in.box
	}
	if n > len(in.buf) {
		// A frame the small tier cannot hold: what has arrived of it moves
		// to a big buffer.
		c.useReadBuf(in.bigSize)
	}
	if in.start+n > len(in.buf) {
		in.end = copy(in.buf, in.buf[in.start:in.end])
		in.start = 0
	}
	// Reads stop where a largest frame starting at in.start would end. One
	// read still brings in many small frames, but never the start of the
	// frame after a large one: that would have to be moved to the front of
	// the buffer before it could be completed, which cost 5% of a bulk
	// receiver's CPU. A stream of large frames now empties the buffer at
	// every frame and starts again at its front.
	stop := min(len(in.buf), in.start+in.limit+frame.Overhead)
	for in.end-in.start < n {
		m, err := c.conn.Read(in.buf[in.end:stop])
		in.short = in.end+m < stop
		in.end += m
		if in.end-in.start >= n {
			return nil
		}
		if err == nil {
			continue
		}
		switch {
		case c.closed.Load():
			return c.failRead(net.ErrClosed)
		case errors.Is(err, io.EOF) && in.end == in.start:
			return c.failRead(fmt.Errorf("spipe: read: connection closed without close-write: %w", ErrTruncated))
		case errors.Is(err, io.EOF):
			return c.failRead(fmt.Errorf("spipe: read: connection closed mid-frame: %w", ErrTruncated))
		case isTimeout(err):
			return fmt.Errorf("spipe: read: %w", err)
		default:
			return c.failRead(fmt.Errorf("spipe: read: %w", err))
		}
	}
	return nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// failRead makes err the sticky read error and kills the connection: the
// peer learns only that the connection closed.
func (c *Conn) failRead(err error) error {
	c.in.err = err
	c.in.data = nil
	c.releaseReadBuf()
	c.conn.Close()
	return err
}

// useReadBuf moves the unconsumed bytes to the front of a buffer of length
// size from the pool, and gives the current one back. in.data is empty.
// in.mu is held.
func (c *Conn) useReadBuf(size int) {
	in := &c.in
	b := pool.Get(size)
	in.end = copy(*b, in.buf[in.start:in.end])
	in.start = 0
	pool.Put(in.box)
	in.box, in.buf = b, *b
}

// releaseReadBuf returns the read buffer to its pool once reading has
// ended for good (in.err is set and in.data, which aliases it, is empty).
// in.mu is held.
func (c *Conn) releaseReadBuf() {
	if c.in.box != nil {
		pool.Put(c.in.box)
		c.in.box, c.in.buf, c.in.start, c.in.end = nil, nil, 0, 0
	}
}

// releaseWriteBuf returns the small-tier write buffer to its pool once
// writing has ended for good (close-write sent or out.err set). out.mu is
// held.
func (c *Conn) releaseWriteBuf() {
	if c.out.box != nil {
		pool.Put(c.out.box)
		c.out.box = nil
	}
}

// Write seals p into frames and sends each with one write call. It fails
// after CloseWrite, and after any write error (including a timeout) the
// connection cannot send again. io.Copy into a Conn uses ReadFrom, which
// reads straight into the frame and saves Write's copy.
func (c *Conn) Write(p []byte) (int, error) {
	if err := c.byteStream(); err != nil {
		return 0, err
	}
	out := &c.out
	out.mu.Lock()
	defer out.mu.Unlock()
	if err := c.writable(); err != nil {
		return 0, err
	}
	buf := c.smallWriteBuf()
	// More than a small frame holds goes through the big tier, for this
	// call only.
	if len(p) > out.dataCap(len(buf)) && out.bigTier() {
		big := pool.Get(out.bigSize)
		defer pool.Put(big)
		buf = *big
	}
	n := 0
	for len(p) > 0 {
		m := min(len(p), out.dataCap(len(buf)))
		if err := c.sendFrame(buf, frame.Data, p[:m]); err != nil {
			return n, err
		}
		n += m
		p = p[m:]
	}
	return n, nil
}

func (c *Conn) writable() error {
	switch {
	case c.out.err != nil:
		return c.out.err
	case c.closed.Load():
		return net.ErrClosed
	case c.out.closed:
		return errWriteClosed
	}
	return nil
}

// smallWriteBuf returns the small-tier send buffer, taken on first use, so
// idle connections and handshake-only probes cost no buffer. out.mu is
// held.
func (c *Conn) smallWriteBuf() []byte {
	if c.out.box == nil {
		c.out.box = pool.Get(c.out.smallSize)
	}
	return *c.out.box
}

// writeFrame seals and sends one control frame. out.mu is held.
func (c *Conn) writeFrame(t frame.Type) error {
	return c.sendFrame(c.smallWriteBuf(), t, nil)
}

// sendFrame seals one frame into buf (data may already sit in buf where
// the frame's plaintext goes, see ReadFrom) and sends it. out.mu is held.
func (c *Conn) sendFrame(buf []byte, t frame.Type, data []byte) error {
	out := &c.out
	if out.counter > frame.MaxCounter {
		out.err = fmt.Errorf("spipe: write: %w", ErrCounterExhausted)
		return out.err
	}
	f := out.fc.Seal(buf[:0], out.counter, t, data, out.padTo)
	out.counter++
	return c.writeOut(f)
}

// writeOut writes sealed frames with one call; a failure is sticky.
// out.mu is held.
func (c *Conn) writeOut(f []byte) error {
	out := &c.out
	if _, err := c.conn.Write(f); err != nil {
		if c.closed.Load() {
			err = net.ErrClosed
		}
		out.err = fmt.Errorf("spipe: write: %w", err)
		c.releaseWriteBuf()
		return out.err
	}
	return nil
}

// CloseWrite sends the authenticated end of this direction (the peer's Read
// returns io.EOF after the data before it) and, if the underlying
// connection supports it, half-closes it. Reading continues to work.
// Calling it again does nothing.
func (c *Conn) CloseWrite() error {
	if err := c.byteStream(); err != nil {
		return err
	}
	return c.closeWrite()
}

func (c *Conn) closeWrite() error {
	out := &c.out
	out.mu.Lock()
	defer out.mu.Unlock()
	if out.closed && out.err == nil {
		return nil
	}
	if err := c.writable(); err != nil {
		return err
	}
	if err := c.writeFrame(frame.CloseWrite); err != nil {
		return err
	}
	out.closed = true
	c.releaseWriteBuf()
	if hc, ok := c.conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return nil
}

// SendKeepalive sends a keepalive frame, which the peer authenticates and
// skips. Use it to keep idle connections (and middleboxes) alive.
func (c *Conn) SendKeepalive() error {
	if err := c.byteStream(); err != nil {
		return err
	}
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	if err := c.writable(); err != nil {
		return err
	}
	return c.writeFrame(frame.Keepalive)
}

// Close closes the connection, unblocking any Read or Write. It sends
// nothing: unless CloseWrite was called first, the peer's Read fails with
// ErrTruncated instead of returning io.EOF, so a connection closed on an
// error path never looks like a complete stream to the peer. Call
// CloseWrite, not Close, to end a stream cleanly.
func (c *Conn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return net.ErrClosed
	}
	return c.conn.Close()
}

// LocalAddr returns the local network address.
func (c *Conn) LocalAddr() net.Addr { return c.conn.LocalAddr() }

// RemoteAddr returns the remote network address.
func (c *Conn) RemoteAddr() net.Addr { return c.conn.RemoteAddr() }

// NetConn returns the underlying connection. Reading or writing it directly
// corrupts the pipe.
func (c *Conn) NetConn() net.Conn { return c.conn }

// SetDeadline sets the read and write deadlines, as net.Conn does. During
// the handshake the handshake's own bound applies; these deadlines apply
// again afterwards.
func (c *Conn) SetDeadline(t time.Time) error {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	c.readDL, c.writeDL = t, t
	return c.conn.SetDeadline(t)
}

// SetReadDeadline sets the read deadline, as net.Conn does. A Read that
// times out leaves the connection usable.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	c.readDL = t
	return c.conn.SetReadDeadline(t)
}

// SetWriteDeadline sets the write deadline, as net.Conn does. A Write that
// times out leaves the connection unable to write (a frame may be cut).
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	c.writeDL = t
	return c.conn.SetWriteDeadline(t)
}

var _ net.Conn = (*Conn)(nil)
