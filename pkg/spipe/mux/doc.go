// Package mux runs many streams over one spipe connection: the
// multiplexed mode of the spipe protocol (docs/PROTOCOL.md section 7).
//
// A client opens streams and a server accepts them; each stream is a
// net.Conn ([*Stream]) with its own flow control, half-close and reset,
// so one slow or failed stream never holds up or ends another. Opening a
// stream costs no round trip: its first data travels right behind its
// open, on a connection whose handshake is already done. The spipe
// connection under a session (its carrier) stays the only encryption and
// authentication: every stream's bytes are frames of that connection.
//
// # Use
//
// Both ends set [github.com/spipe-dev/spipe/pkg/spipe.Config.Multiplex].
// The client wraps its connection with [Client] and calls
// [Session.Open]; the server wraps each accepted connection whose
// ConnectionState says Multiplexed with [Server] and calls
// [Session.Accept] (a Session is a net.Listener of its streams). A server
// whose Config sets Multiplex also accepts plain clients, whose
// connections it uses directly.
//
// # Ending a stream
//
// As with [github.com/spipe-dev/spipe/pkg/spipe.Conn], only
// [Stream.CloseWrite] ends a direction cleanly: the peer's Read returns
// io.EOF. [Stream.Close] ends the stream cleanly only once both
// directions have ended (CloseWrite called and Read returned io.EOF);
// otherwise it resets the stream, and so does [Stream.Reset]: the peer's
// Read and Write then fail with [ErrStreamReset], never a clean end. When
// the carrier fails or closes, every stream that has not ended both ways
// fails with [ErrSessionClosed].
//
// The streams are multiplexed with yamux, as implemented by
// github.com/libp2p/go-yamux/v5; the settings both ends must share are in
// docs/PROTOCOL.md.
package mux
