package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"os"
	"time"

	"github.com/pires/go-proxyproto"
)

// errProxyHeader marks a connection from a trusted load balancer that did
// not begin with a valid PROXY header in time; Reason names it
// "proxy_header".
var errProxyHeader = errors.New("PROXY header")

// sendProxyHint ends the error of a connection from a trusted address
// without a header: the likely cause is the balancer's configuration.
const sendProxyHint = " (is the balancer told to send one? HAProxy: send-proxy-v2)"

// proxyReadSize is the buffer the header is read through. The socket's
// bytes past the header stay in it for the handshake; a version 1 header
// (at most 107 bytes) must come in one read, as the library requires.
const proxyReadSize = 512

// trustsProxy reports whether c comes from an address in AcceptProxyFrom,
// whose connections begin with a PROXY header naming the client.
func (f *Forwarder) trustsProxy(c net.Conn) bool {
	if len(f.AcceptProxyFrom) == 0 {
		return false
	}
	a, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return false
	}
	ip := a.AddrPort().Addr().Unmap()
	for _, p := range f.AcceptProxyFrom {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// fromProxy returns the connection the handshake runs on: raw itself,
// unless t says raw came from a trusted load balancer. Then it reads the
// PROXY header raw must begin with, within the first-message deadline,
// and returns raw as the client the header names (its addresses, and the
// bytes read past the header); t, until then the balancer's, becomes the
// client's. A header that is missing, malformed or late fails the
// connection (errProxyHeader), counted as a failed handshake. One cut by
// the shutdown (its ticket cut, or its socket closed once ctx ended) is
// not: it is the connection's end (see failedBeforeTransfer).
func (f *Forwarder) fromProxy(ctx context.Context, raw net.Conn, t *ticket) (net.Conn, error) {
	if t == nil || !t.header {
		return raw, nil
	}
	c, err := readProxyHeader(raw, t.accepted.Add(f.firstMessageDeadline()))
	if err == nil {
		c.Conn = t.move(sourceOf(c), raw, len(c.pending))
		if c.RemoteAddr() != raw.RemoteAddr() {
			f.log().Debug("PROXY header", "peer", addrString(c.RemoteAddr()), "via", addrString(raw.RemoteAddr()))
		}
		return c, nil
	}
	if cause := t.leave(); cause != nil {
		err = &cutError{cause: cause, err: err}
	}
	if ctx.Err() != nil && !isShutdown(err) {
		err = errShutdownOf(err)
	}
	if !isShutdown(err) {
		f.observer().Handshake(time.Since(t.accepted), err)
	}
	return nil, err
}

// firstMessageDeadline is how long after accept the first message may
// take: the first-message deadline, or the handshake timeout if that
// does not apply.
func (f *Forwarder) firstMessageDeadline() time.Duration {
	if r := f.helloRule(); r.timeout > 0 {
		return r.timeout
	}
	return f.handshakeTimeout()
}

// readProxyHeader reads a PROXY header (version 1 or 2) from raw by
// deadline. What it names is the client:
//   - a TCP over IPv4 or IPv6 connection: its source and destination
//     addresses, as the connection's remote and local addresses;
//   - LOCAL (version 2; the balancer's own connection, such as a health
//     check), UNKNOWN (version 1), or a client on a Unix socket (which has
//     no address to count or forward): the balancer itself, as raw says;
//   - a datagram protocol: nothing a stream can carry; an error.
//
// Version 2's TLVs carry facts about the client's connection to the
// balancer (ALPN, TLS, cloud endpoint IDs) that spipe has no use for:
// they must be well formed, a CRC32C among them must match, and the rest
// are ignored, not forwarded.
//
// A connection closed or reset before its first byte is not a header
// failure but that end (a bare TCP health check); one that says nothing
// until the deadline has no header.
func readProxyHeader(raw net.Conn, deadline time.Time) (*proxiedConn, error) {
	_ = raw.SetReadDeadline(deadline)
	defer raw.SetReadDeadline(noDeadline)
	rec := &headerRecorder{r: raw}
	br := bufio.NewReaderSize(rec, proxyReadSize)
	if _, err := br.Peek(1); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, fmt.Errorf("%w: none by the first-message deadline%s", errProxyHeader, sendProxyHint)
		}
		return nil, err
	}
	h, err := proxyproto.Read(br)
	switch {
	case errors.Is(err, proxyproto.ErrNoProxyProtocol):
		return nil, fmt.Errorf("%w: missing, the connection does not begin with one%s", errProxyHeader, sendProxyHint)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, fmt.Errorf("%w: not complete by the first-message deadline", errProxyHeader)
	case err != nil:
		return nil, fmt.Errorf("%w: malformed: %w", errProxyHeader, err)
	}
	size := len(rec.read) - br.Buffered()
	if err := checkTLVs(h, rec.read[:size]); err != nil {
		return nil, fmt.Errorf("%w: %w", errProxyHeader, err)
	}
	c := &proxiedConn{Conn: raw, remote: raw.RemoteAddr(), local: raw.LocalAddr()}
	if n := br.Buffered(); n > 0 {
		c.pending = append([]byte(nil), rec.read[size:size+n]...)
	}
	if h.Command.IsProxy() {
		switch h.TransportProtocol {
		case proxyproto.TCPv4, proxyproto.TCPv6:
			c.remote, c.local = h.SourceAddr, h.DestinationAddr
		case proxyproto.UnixStream:
			// A client of the balancer's own host: no address to count it
			// by or forward; it is the balancer's.
		default:
			return nil, fmt.Errorf("%w: names a datagram connection (%#x), not a stream", errProxyHeader, byte(h.TransportProtocol))
		}
	}
	return c, nil
}

// checkTLVs checks version 2's TLVs: well formed, and a CRC32C, if the
// balancer sent one, matching the header (raw, as received) computed with
// the checksum's own bytes zero, as the PROXY protocol's section 2.2.5
// asks of a receiver.
func checkTLVs(h *proxyproto.Header, raw []byte) error {
	tlvs, err := h.TLVs()
	if err != nil {
		return fmt.Errorf("malformed TLVs: %w", err)
	}
	for _, tlv := range tlvs {
		if tlv.Type != proxyproto.PP2_TYPE_CRC32C {
			continue
		}
		if len(tlv.Value) != 4 {
			return fmt.Errorf("CRC32C TLV of %d bytes, want 4", len(tlv.Value))
		}
		at := crcOffset(raw, tlv.Value)
		if at < 0 {
			return errors.New("CRC32C TLV not found in the header")
		}
		zeroed := append([]byte(nil), raw...)
		clear(zeroed[at : at+4])
		if crc32.Checksum(zeroed, castagnoli) != binary.BigEndian.Uint32(tlv.Value) {
			return errors.New("CRC32C does not match")
		}
	}
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcOffset finds the CRC32C TLV's value in raw by walking the TLVs after
// the address block: where it is, not merely bytes equal to it.
func crcOffset(raw, value []byte) int {
	const fixed = 16 // signature, version and command, family, length
	var block int
	switch proxyproto.AddressFamilyAndProtocol(raw[13]) {
	case proxyproto.TCPv4, proxyproto.UDPv4:
		block = 12
	case proxyproto.TCPv6, proxyproto.UDPv6:
		block = 36
	case proxyproto.UnixStream, proxyproto.UnixDatagram:
		block = 216
	}
	for i := fixed + block; i+3 <= len(raw); {
		n := int(binary.BigEndian.Uint16(raw[i+1 : i+3]))
		if proxyproto.PP2Type(raw[i]) == proxyproto.PP2_TYPE_CRC32C && n == len(value) && i+3+n <= len(raw) {
			return i + 3
		}
		i += 3 + n
	}
	return -1
}

// headerAndMessageIn reports whether c's socket holds, unread, a whole
// PROXY header and need bytes after it: a balancer's connection whose
// first message is in, though no goroutine has read it yet.
func headerAndMessageIn(c net.Conn, need int) bool {
	b := make([]byte, 16+int(proxyproto.MaxV2HeaderSize)+need)
	n, ok := peek(c, b)
	size := proxyHeaderSize(b[:n])
	return ok && size > 0 && n >= size+need
}

// proxyHeaderSize returns the size of the PROXY header b begins with, or
// 0 if b does not hold all of it (or begins with none: the parser will
// say what is wrong).
func proxyHeaderSize(b []byte) int {
	switch {
	case bytes.HasPrefix(b, proxyproto.SIGV2) && len(b) >= 16:
		if size := 16 + int(binary.BigEndian.Uint16(b[14:16])); len(b) >= size {
			return size
		}
	case bytes.HasPrefix(b, proxyproto.SIGV1):
		if i := bytes.Index(b, []byte("\r\n")); i >= 0 {
			return i + 2
		}
	}
	return 0
}

// headerRecorder keeps what is read through it: the header's bytes, for its
// checksum, and those past it, for the handshake.
type headerRecorder struct {
	r    io.Reader
	read []byte
}

func (r *headerRecorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.read = append(r.read, p[:n]...)
	return n, err
}

// proxiedConn is a connection from a load balancer, after its PROXY
// header: it has the addresses the header named, and reads first what was
// read past the header.
type proxiedConn struct {
	net.Conn // the socket, or the watch for the first message over it (move)
	pending  []byte
	remote   net.Addr
	local    net.Addr
}

func (c *proxiedConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		if len(c.pending) == 0 {
			c.pending = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}

// RemoteAddr is the client the header named (or the balancer, see
// readProxyHeader).
func (c *proxiedConn) RemoteAddr() net.Addr { return c.remote }

// LocalAddr is the address the client reached at the balancer, as the
// header named it.
func (c *proxiedConn) LocalAddr() net.Addr { return c.local }

// CloseWrite half-closes the socket: the protocol above half-closes what
// it was given.
func (c *proxiedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// NetConn returns the connection under the header, so abortConn resets
// the socket.
func (c *proxiedConn) NetConn() net.Conn { return c.Conn }
