package salsa20_test

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
)

// The fuzz targets run the shared bodies of streamtest over this package's
// variants (the fuzzer's sel byte picks one of family.Variants).

// FuzzChunking: any split of a message into XORKeyStream calls gives the
// same bytes as one call.
func FuzzChunking(f *testing.F) { streamtest.FuzzChunking(f, family) }

// FuzzSeekEqualsDiscarding: Seek(n) gives what a fresh cipher gives after
// discarding n bytes, and what SetCounter(n/64) gives after discarding
// n%64 bytes; seeds across block 2^32 and at the last byte Seek reaches.
func FuzzSeekEqualsDiscarding(f *testing.F) {
	f.Add([]byte{1}, uint8(3), uint64(1<<32*64-3), uint16(200))
	f.Add([]byte{2}, uint8(1), uint64(1<<64-1), uint16(1))
	streamtest.FuzzSeekEqualsDiscarding(f, family)
}

// FuzzRoundTrip: decrypting with any chunking restores the message, and
// encrypting in place gives the same ciphertext as into a separate buffer.
func FuzzRoundTrip(f *testing.F) { streamtest.FuzzRoundTrip(f, family) }
