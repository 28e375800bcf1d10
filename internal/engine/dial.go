package engine

import (
	"context"
	"fmt"
	"net"

	"github.com/pires/go-proxyproto"
)

// Conn is a stream whose write half can be closed on its own, so an EOF on
// one side of a forwarded connection reaches the other while replies still
// flow. *net.TCPConn, *net.UnixConn and *spipe.Conn all satisfy it.
type Conn interface {
	net.Conn
	CloseWrite() error
}

// TargetDialer opens plaintext connections to a target address.
type TargetDialer struct {
	Target Addr
	// Source is the local address for TCP connections (-b); nil lets the
	// kernel choose.
	Source *net.TCPAddr
	// NoKeepAlive turns TCP keep-alives off.
	NoKeepAlive bool
	// ProxyHeader sends a PROXY protocol v2 header first, naming the
	// client's address as the source and the address it reached as the
	// destination.
	ProxyHeader bool
}

// Dial connects to the target; the host name is resolved on every call,
// so a target that moves is followed without a restart. The context bounds
// the resolution and the connect. from is the connection being forwarded
// (its addresses go in the PROXY header). A TCP connection has
// TCP_NODELAY (Go sets it on every one; the pipe relies on it: each frame
// leaves as soon as it is written) and keep-alives unless NoKeepAlive, or
// the target is on loopback, where they can tell nothing
// (keepAliveWorthwhile).
func (d *TargetDialer) Dial(ctx context.Context, from net.Conn) (net.Conn, error) {
	nd := net.Dialer{KeepAlive: -1} // set below, where they are worth it
	if d.Source != nil && !d.Target.IsUnix() {
		nd.LocalAddr = d.Source
	}
	c, err := nd.DialContext(ctx, d.Target.Network, d.Target.Address)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", d.Target, err)
	}
	if tc, ok := c.(*net.TCPConn); ok && !d.NoKeepAlive && keepAliveWorthwhile(tc.RemoteAddr()) {
		_ = tc.SetKeepAliveConfig(keepAliveConfig)
	}
	if d.ProxyHeader {
		if err := writeProxyHeader(ctx, c, from); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// writeProxyHeader sends a PROXY v2 header. Addresses the protocol cannot
// carry (a Unix-socket client, or mixed families) produce a LOCAL header,
// which tells the backend to use the connection's own addresses.
func writeProxyHeader(ctx context.Context, to net.Conn, from net.Conn) error {
	var src, dst net.Addr
	if from != nil {
		src, dst = from.RemoteAddr(), from.LocalAddr()
	}
	h := proxyproto.HeaderProxyFromAddrs(2, src, dst)
	if dl, ok := ctx.Deadline(); ok {
		_ = to.SetWriteDeadline(dl)
		defer to.SetWriteDeadline(noDeadline)
	}
	if _, err := h.WriteTo(to); err != nil {
		return fmt.Errorf("send PROXY header: %w", err)
	}
	return nil
}
