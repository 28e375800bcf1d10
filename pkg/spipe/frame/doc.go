// Package frame is the record layer of the spipe protocol (version 2): it
// seals and opens the frames of one direction of a connection under that
// direction's key.
//
// A frame is a 3-byte big-endian length n, then the sealed payload: the
// suite's AEAD output over n bytes of inner plaintext, which is the body,
// one type byte and optional zero padding. The body is the data, if the
// type carries any, followed by the type's fields: none for the types of
// the byte-stream mode ([Data], [CloseWrite], [Keepalive]), a stream id
// and more for those of the multiplexed mode ([StreamOpen], [StreamData],
// [StreamEnd], [StreamReset], [StreamCredit], [GoAway], [Ping], [Pong]),
// which package [github.com/spipe-dev/spipe/pkg/spipe/mux] parses. The
// type and fields sit inside the encryption, so an observer cannot tell a
// padded data frame from the end of a stream, a keepalive or any stream
// frame.
//
// Frame number i of a direction is sealed with nonce i (the counter, never
// sent), and the length is authenticated with it, so:
//
//   - any frame opens on its own, given its number and the direction key:
//     a recorded stream supports random access ([Cipher.Open] of frame N
//     needs nothing from frames 0..N-1; their cleartext lengths locate it);
//   - a frame that was modified, dropped, duplicated, reordered or spliced
//     in from another direction or connection fails with [ErrTampered].
//
// pkg/spipe uses this package for every connection; docs/PROTOCOL.md
// section 4 is its specification.
package frame
