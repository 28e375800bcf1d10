package mux

import (
	"errors"
	"fmt"
)

// Errors a stream or session reports; callers tell them apart with
// errors.Is.
var (
	// ErrNotMultiplexed: Client or Server was given a connection whose
	// handshake did not negotiate the multiplexed mode (set
	// spipe.Config.Multiplex on both ends, and check
	// ConnectionState.Multiplexed on a server that also serves plain
	// clients).
	ErrNotMultiplexed = errors.New("spipe/mux: connection does not run the multiplexed mode (Config.Multiplex)")

	// ErrStreamReset: the peer reset the stream (it aborted it, or, as a
	// server, refused it). Data it had sent but this side had not read is
	// discarded, as with a TCP reset.
	ErrStreamReset = errors.New("spipe/mux: stream reset by the peer")

	// ErrSessionClosed: the session ended before the stream did, because
	// its carrier closed or failed; Session.Err says why.
	ErrSessionClosed = errors.New("spipe/mux: session closed")

	// ErrProtocol: the peer broke the multiplexing protocol (for example
	// it sent more than a stream's window, or opened a stream out of
	// order). Only a peer holding the key can cause it; the session ends.
	ErrProtocol = errors.New("spipe/mux: peer broke the multiplexing protocol")

	// ErrGoAway: the session takes no new streams, because one of its
	// ends sent go-away (Session.GoAway, or Close): Open fails with it,
	// and a client then opens a new session for new streams. The streams
	// already open carry on.
	ErrGoAway = errors.New("spipe/mux: session going away: no new streams")
)

// errRefused is a stream the server refused: it did nothing for it (too
// many streams, or the open crossed the server's go-away), so opening it
// again elsewhere is safe.
var errRefused = fmt.Errorf("%w (refused: the server did nothing for it)", ErrStreamReset)

// errWriteClosed is returned by Write after CloseWrite: a caller's bug.
var errWriteClosed = errors.New("spipe/mux: write after CloseWrite")

// errOnlyClient is returned by a server's Open: in the multiplexed mode
// only the client opens streams.
var errOnlyClient = errors.New("spipe/mux: only the client side opens streams")

// errIDsExhausted is a client's Open after it opened stream 2^32-1.
var errIDsExhausted = errors.New("spipe/mux: this session has used every stream id; open another session")
