package spipe

import (
	"context"
	"net"
)

// listener wraps accepted connections as spipe servers.
type listener struct {
	net.Listener
	config *Config
}

// Accept waits for the next connection and returns it as a *Conn (server
// side). The handshake is not run here, so one slow client cannot hold up
// Accept: call (*Conn).HandshakeContext, or it runs on the first Read or
// Write.
func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Server(c, l.config), nil
}

// NewListener returns a listener whose Accept wraps each connection of
// inner with Server(conn, config).
func NewListener(inner net.Listener, config *Config) net.Listener {
	return &listener{Listener: inner, config: config}
}

// Listen listens on the network address (as net.Listen) and returns a
// listener of spipe server connections (*Conn). The config is checked
// first.
func Listen(network, address string, config *Config) (net.Listener, error) {
	if err := config.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen(network, address)
	if err != nil {
		return nil, err
	}
	return NewListener(ln, config), nil
}

// Dialer dials spipe connections, like tls.Dialer: a net.Dialer for the
// connection and a Config for the handshake.
type Dialer struct {
	// NetDialer is the dialer for the underlying connection (source
	// address, keep-alives, ...); nil means a zero net.Dialer.
	NetDialer *net.Dialer
	// Config is the client's configuration; it must not be nil.
	Config *Config
}

// Dial is DialContext with a background context.
func (d *Dialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

// DialContext connects to address and completes the client handshake, both
// bounded by ctx (and the handshake also by Config.HandshakeTimeout). The
// returned net.Conn is a *Conn whose handshake is done.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.dial(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (d *Dialer) dial(ctx context.Context, network, address string) (*Conn, error) {
	if err := d.Config.Validate(); err != nil {
		return nil, err
	}
	nd := d.NetDialer
	if nd == nil {
		nd = new(net.Dialer)
	}
	raw, err := nd.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	c := Client(raw, d.Config)
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Dial connects to address and completes the client handshake, bounded by
// config.HandshakeTimeout, like tls.Dial. Use a Dialer for a context or a
// net.Dialer of your own.
func Dial(network, address string, config *Config) (*Conn, error) {
	return (&Dialer{Config: config}).dial(context.Background(), network, address)
}
