package engine

import (
	"context"
	"log/slog"
	"net"
)

// Session describes the secured side of a connection for its log lines.
type Session struct {
	// Key is the fingerprint of the pre-shared key the connection used.
	Key string
	// Suite names the cipher suite sealing its frames.
	Suite string
	// ForwardSecrecy says whether its session keys include an ephemeral
	// exchange.
	ForwardSecrecy bool
	// Mux says the connection is a stream of a multiplexed carrier.
	Mux bool
}

// stream is the session of each stream of a carrier whose session is s.
func (s *Session) stream() *Session {
	st := *s
	st.Mux = true
	return &st
}

// Secured is what Forwarder.Secure returns to describe the session it set
// up. The engine unwraps it at once: Conn is what it forwards, so a
// *spipe.Conn inside keeps its fast paths. When the handshake chose the
// multiplexed mode, Carrier is set instead of Conn.
type Secured struct {
	Conn
	Session Session
	Carrier Carrier
}

// Carrier is an authenticated connection that carries many streams (the
// protocol's multiplexed mode; *mux.Session implements it). Its streams
// are Conns.
type Carrier interface {
	// Open opens a stream (the connecting side).
	Open(ctx context.Context) (net.Conn, error)
	// Accept waits for the next stream the peer opens (the listening
	// side), failing once the carrier has ended.
	Accept() (net.Conn, error)
	// Done is closed once the carrier has ended; Err then says why (nil:
	// closed on purpose by either end).
	Done() <-chan struct{}
	Err() error
	// GoAway tells the peer this end takes (or opens) no new streams; the
	// open ones carry on, and the carrier ends once none is. GoingAway is
	// closed once either end has said so.
	GoAway() error
	GoingAway() <-chan struct{}
	// Close ends the carrier after sending what was queued on it; open
	// streams are reset.
	Close() error
}

// Mux configures "spipe connect --mux": each connection becomes a stream
// of one of a few carriers kept open to the listener.
type Mux struct {
	// Carriers is how many carriers to keep open; 0 means 1.
	Carriers int
	// StreamsPerCarrier caps the streams open at once on one carrier
	// (0: 1000); a connection that finds every carrier full waits for
	// room, within the handshake timeout.
	StreamsPerCarrier int
	// Target names the listener in log lines.
	Target string
}

// appendAttrs adds the session's fields to a log line; a nil session (no
// handshake, or one that described nothing) adds none.
func (s *Session) appendAttrs(attrs []slog.Attr) []slog.Attr {
	if s == nil {
		return attrs
	}
	attrs = append(attrs, slog.String("key", s.Key), slog.String("suite", s.Suite), slog.Bool("pfs", s.ForwardSecrecy))
	if s.Mux {
		attrs = append(attrs, slog.Bool("mux", true))
	}
	return attrs
}
