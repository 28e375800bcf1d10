// Package spipe is the secure-pipe protocol (version 2): an authenticated,
// encrypted, half-closable byte stream over any net.Conn between two
// parties sharing a key, shaped like crypto/tls.
//
// # Use
//
// Both ends load the same key file ([LoadKeyFile]) into a [Config], with
// the same [Config.Context] if they set one. A client wraps a connection
// with [Client] or connects with [Dial] or a [Dialer]; a server wraps with
// [Server] or accepts from [Listen] or [NewListener]. The result is a
// [*Conn], a net.Conn with [Conn.Handshake], [Conn.HandshakeContext],
// [Conn.CloseWrite] (the authenticated end of a direction) and
// [Conn.ConnectionState].
//
// A complete transfer ends with CloseWrite; Close alone makes the peer
// see [ErrTruncated], which is what an error path should do (see [Conn]).
//
// # Many streams over one connection
//
// With [Config.Multiplex] on both ends a connection runs the multiplexed
// mode instead: package [github.com/spipe-dev/spipe/pkg/spipe/mux] carries
// any number of streams over it, each opened without a round trip. A
// server with Multiplex set serves plain and multiplexed clients alike
// ([ConnectionState.Multiplexed] tells them apart).
//
// # Guarantees
//
//   - Mutual authentication by the pre-shared key and context: a server's
//     handshake succeeds only after the client has proven, with a message
//     bound to the server's fresh nonce, that it holds the key; a client's
//     only with a server that holds it and answered this very hello.
//   - Forward secrecy (X25519 from crypto/ecdh) unless turned off
//     ([ForwardSecrecy]).
//   - Every frame is sealed under a per-direction key with its sequence
//     number as nonce: modified, dropped, reordered, duplicated or injected
//     frames fail with [ErrTampered]; a stream cut short fails with
//     [ErrTruncated]; no unauthenticated byte is ever returned by Read.
//     Frame types are inside the encryption, and [Config.PadTo] hides
//     write sizes and the end of a stream.
//   - Failures wrap exported sentinel errors; the peer learns only that the
//     connection closed.
//
// # Keys
//
// A key is the SHA-256 of a key file's whole content, which must hold 256
// bits of entropy ([Key]). Use one key per tunnel, or give tunnels that
// share a key distinct contexts: otherwise an attacker on the network can
// steer a client to another tunnel's server, or back into its own host's
// server.
//
// The wire format, key schedule, state machine, admission rules and threat
// model are specified in docs/PROTOCOL.md, with transcript vectors in
// testdata/protocol-v2. Package [github.com/spipe-dev/spipe/pkg/spipe/frame]
// is the record layer on its own, for random access into recorded streams.
package spipe
