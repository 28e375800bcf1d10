package engine

import (
	"io"
	"net"
	"time"
)

// StdioConn is a connection made of a reader and a writer, such as the
// stdin and stdout that ssh gives a ProxyCommand. CloseWrite closes the
// writer, which the peer reads as EOF.
type StdioConn struct {
	R io.ReadCloser
	W io.WriteCloser
}

var _ Conn = (*StdioConn)(nil)

// Read reads from R.
func (c *StdioConn) Read(p []byte) (int, error) { return c.R.Read(p) }

// Write writes to W.
func (c *StdioConn) Write(p []byte) (int, error) { return c.W.Write(p) }

// CloseWrite closes W.
func (c *StdioConn) CloseWrite() error { return c.W.Close() }

// Close closes R and W.
func (c *StdioConn) Close() error {
	rerr := c.R.Close()
	werr := c.W.Close()
	if rerr != nil {
		return rerr
	}
	return werr
}

// LocalAddr returns a placeholder address named "stdio".
func (c *StdioConn) LocalAddr() net.Addr { return stdioAddr{} }

// RemoteAddr returns a placeholder address named "stdio".
func (c *StdioConn) RemoteAddr() net.Addr { return stdioAddr{} }

// SetDeadline sets the deadline on R and W where they support one.
func (c *StdioConn) SetDeadline(t time.Time) error {
	_ = c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the read deadline on R if it supports one.
func (c *StdioConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.R.(interface{ SetReadDeadline(time.Time) error }); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// SetWriteDeadline sets the write deadline on W if it supports one.
func (c *StdioConn) SetWriteDeadline(t time.Time) error {
	if d, ok := c.W.(interface{ SetWriteDeadline(time.Time) error }); ok {
		return d.SetWriteDeadline(t)
	}
	return nil
}

type stdioAddr struct{}

func (stdioAddr) Network() string { return "stdio" }
func (stdioAddr) String() string  { return "stdio" }
