// Package mux runs many streams over one spipe connection: the
// multiplexed mode of the spipe protocol (mode 3, docs/PROTOCOL.md
// section 7), the protocol's own stream layer, as SSH has channels and
// HTTP/2 and QUIC have streams.
//
// A client opens streams and a server accepts them; each stream is a
// net.Conn ([*Stream]) with its own flow control, half-close and reset,
// so one slow or failed stream never holds up or ends another. Opening a
// stream costs no round trip: its first data travels in the frame that
// opens it, on a connection whose handshake is already done. Every
// stream's data travels in authenticated frames of its own, sealed by
// the spipe connection under the session (its carrier), which stays the
// only encryption and authentication.
//
// # Use
//
// The spipe handshake comes first: both ends set
// [github.com/spipe-dev/spipe/pkg/spipe.Config.Multiplex], and [Client]
// and [Server] run the connection's handshake themselves if it has not
// run yet (so a server's Server returns only once the client has proven
// its key). The client then calls [Session.Open]; the server calls
// [Session.Accept] (a Session is a net.Listener of its streams). A server
// whose Config sets Multiplex also accepts plain clients: it checks
// ConnectionState().Multiplexed after the handshake, and uses a plain
// connection directly. Nil arguments (a nil connection, context, reader
// or writer) are errors, never panics.
//
// # Ending a stream
//
// As with [github.com/spipe-dev/spipe/pkg/spipe.Conn], only
// [Stream.CloseWrite] ends a direction cleanly: the peer's Read returns
// io.EOF. [Stream.Close] ends the stream cleanly only once both
// directions have ended (CloseWrite called and the peer's end arrived);
// otherwise it resets the stream, and so does [Stream.Reset]: the peer's
// Read and Write then fail with [ErrStreamReset], never a clean end. When
// the carrier fails or closes, every stream that has not ended both ways
// fails with [ErrSessionClosed].
//
// # Ending a session
//
// [Session.GoAway] says this end takes (or opens) no new streams while
// the open ones finish; the session then ends cleanly on its own once
// none is open, and a client opens a new session for new streams (the
// peer's go-away closes [Session.GoingAway]). [Session.Close] ends it at
// once, resetting what is still open.
//
// # Bounds
//
// A stream's window is counted in what its frames cost (their data, and
// 64 bytes more each), so however small the frames, a stream holds at
// most its window of unread data: 256 KiB, or up to
// [Config.MaxStreamWindow] for a stream alone on its session whose reader
// keeps up. What the reader has taken (frames' data and charges, empty
// frames' too) is granted back, so a sender whose reader keeps up never
// runs short of window, whatever the sizes of its frames. Each stream's writer seals and writes its own frames, bulk
// ones up to 1 MiB as a plain connection's, and one goroutine reads the
// carrier and copies each frame's data into its stream's buffer, where
// the stream's reader takes it.
package mux
