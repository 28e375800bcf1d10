// Package spipe is the secure-pipe protocol: an authenticated, encrypted,
// half-closable byte stream over any net.Conn between two parties sharing a
// key, shaped like crypto/tls.
//
// # Use
//
// Both ends load the same key file ([LoadKeyFile]) into a [Config]. A client
// wraps a connection with [Client] or connects with [Dial]; a server wraps
// with [Server] or accepts from [Listen]. The result is a [*Conn], a
// net.Conn with [Conn.Handshake], [Conn.CloseWrite] (authenticated
// half-close) and [Conn.ConnectionState].
//
// # Guarantees
//
//   - Mutual authentication by the pre-shared key: a server's Handshake
//     returns only after the client has proven, with a message bound to the
//     server's fresh nonce, that it holds the key.
//   - Forward secrecy (X25519 from crypto/ecdh) unless turned off.
//   - Every frame is sealed under a per-direction key with its sequence
//     number as nonce: modified, dropped, reordered, duplicated or injected
//     frames fail with [ErrTampered]; a stream cut short fails with
//     [ErrTruncated]; no unauthenticated byte is ever returned by Read.
//   - Failures are classified by exported sentinel errors ([ErrorClass]
//     names them for metrics); the peer learns only that the connection
//     closed.
//
// The wire format, key schedule, state machine and threat model are
// specified in docs/PROTOCOL.md. [FrameCipher] exposes the frame layer for
// random access into a recorded stream.
package spipe
