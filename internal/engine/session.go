package engine

import "log/slog"

// Session describes the secured side of a connection for its log lines.
type Session struct {
	// Key is the fingerprint of the pre-shared key the connection used.
	Key string
	// Suite names the cipher suite sealing its frames.
	Suite string
	// ForwardSecrecy says whether its session keys include an ephemeral
	// exchange.
	ForwardSecrecy bool
}

// Secured is what Forwarder.Secure returns to describe the session it set
// up. The engine unwraps it at once: Conn is what it forwards, so a
// *spipe.Conn inside keeps its fast paths.
type Secured struct {
	Conn
	Session Session
}

// appendAttrs adds the session's fields to a log line; a nil session (no
// handshake, or one that described nothing) adds none.
func (s *Session) appendAttrs(attrs []slog.Attr) []slog.Attr {
	if s == nil {
		return attrs
	}
	return append(attrs, slog.String("key", s.Key), slog.String("suite", s.Suite), slog.Bool("pfs", s.ForwardSecrecy))
}
