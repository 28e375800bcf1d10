package service

import (
	"context"
	"errors"
	"net"
	"syscall"

	"github.com/spipe-dev/spipe/internal/engine"
	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/mux"
)

// clientHelloSize is the size of the protocol's first message
// (docs/PROTOCOL.md 2.1), which a client sends as soon as it is connected:
// the listener cuts a connection that has not sent it within the engine's
// first-message deadline. TestClientHelloSize checks it against what
// pkg/spipe sends.
const clientHelloSize = 107

// serverHandshake runs the server side of the protocol with the keys
// current when the connection arrived. A client that asked for the
// multiplexed mode gets a carrier, whose streams the engine forwards.
func (s *Service) serverHandshake(ctx context.Context, c net.Conn) (engine.Conn, error) {
	ks := s.keys.Load()
	return s.handshake(ctx, spipe.Server(c, ks.config), ks)
}

// muxConfig is the multiplexing configuration of this side's sessions.
func (s *Service) muxConfig() *mux.Config {
	return &mux.Config{MaxStreams: s.opts.MuxStreams, MaxStreamWindow: s.opts.MuxWindow}
}

// clientHandshake runs the client side. A server refuses a client by
// closing the connection without a word, so the client cannot know why;
// its error lists the likely causes instead.
func (s *Service) clientHandshake(ctx context.Context, c net.Conn) (engine.Conn, error) {
	ks := s.keys.Load()
	sc, err := s.handshake(ctx, spipe.Client(c, ks.config), ks)
	if err != nil && refusedByServer(err) {
		err = &refusedError{err}
	}
	return sc, err
}

func (s *Service) handshake(ctx context.Context, sc *spipe.Conn, ks *keySet) (engine.Conn, error) {
	if err := sc.HandshakeContext(ctx); err != nil {
		sc.Close()
		return nil, err
	}
	st := sc.ConnectionState()
	sec := &engine.Secured{Conn: sc, Session: engine.Session{
		Key:            ks.fingerprints[st.KeyIndex],
		Suite:          st.Suite.String(),
		ForwardSecrecy: st.ForwardSecrecy,
	}}
	if !st.Multiplexed {
		return sec, nil
	}
	newSession := mux.Server
	if s.opts.Mode == Connect {
		newSession = mux.Client
	}
	session, err := newSession(sc, s.muxConfig())
	if err != nil {
		return nil, err
	}
	sec.Conn, sec.Carrier = nil, session
	return sec, nil
}

// refusedByServer reports a handshake the server ended: the connection
// closed or reset before the server proved it holds the key.
func refusedByServer(err error) bool {
	return errors.Is(err, spipe.ErrTruncated) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// refusedError is a client handshake the server ended. The protocol's
// error already lists the likely causes; this adds where to look for each
// in the tool, and wraps it.
type refusedError struct{ err error }

func (e *refusedError) Error() string {
	return e.err.Error() + "; to check: `spipe key fingerprint FILE` and --context at both ends," +
		" --cipher, --require-pfs against --no-pfs (spiped speaks another protocol)"
}

func (e *refusedError) Unwrap() error { return e.err }
