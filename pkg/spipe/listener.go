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
// side). The handshake is not run here: call (*Conn).Handshake, or it runs
// on the first Read or Write.
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

// Dial connects to address and completes the client handshake. ctx bounds
// both the connection and the handshake (which the Config's
// HandshakeTimeout bounds too).
func Dial(ctx context.Context, network, address string, config *Config) (*Conn, error) {
	return DialWithDialer(ctx, &net.Dialer{}, network, address, config)
}

// DialWithDialer is Dial with a caller's net.Dialer (source address, keep
// alive, ...).
func DialWithDialer(ctx context.Context, dialer *net.Dialer, network, address string, config *Config) (*Conn, error) {
	if err := config.Validate(); err != nil {
		return nil, err
	}
	raw, err := dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	c := Client(raw, config)
	if err := c.Handshake(ctx); err != nil {
		return nil, err
	}
	return c, nil
}
