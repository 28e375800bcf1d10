package aead

import "encoding/binary"

// PutCounterNonce fills nonce with a message counter: the counter as 8
// little-endian bytes, then zeros. It works for 12- and 24-byte nonces and
// panics if nonce is shorter than 8 bytes. It does not allocate.
//
// Counter nonces are how a sequence of messages under one key is numbered
// (message i sealed with nonce i): they never repeat as long as the counter
// does not, which is the caller's duty (stop before wrapping 2^64).
func PutCounterNonce(nonce []byte, counter uint64) {
	binary.LittleEndian.PutUint64(nonce[:8], counter)
	clear(nonce[8:])
}
