package chacha20_test

import (
	"testing"

	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/stretchr/testify/require"
)

// fuzzVariant maps a fuzzer byte to one of the variants.
func fuzzVariant(sel uint8) (keySize, nonceSize, rounds int) {
	v := variants[int(sel)%len(variants)]
	return v.key, v.nonce, v.rounds
}

// fuzzCipher builds a cipher of the selected variant, stretching or cutting
// the fuzzer's key bytes to the right sizes.
func fuzzCipher(t *testing.T, seed []byte, sel uint8) *chacha20.Cipher {
	keySize, nonceSize, rounds := fuzzVariant(sel)
	material := make([]byte, keySize+nonceSize)
	copy(material, seed)
	return mustCipher(t, material[:keySize], material[keySize:], rounds)
}

// splitAt XORs src into dst through c in calls whose lengths come from
// cuts (one byte each, cycled), so the fuzzer controls the chunking.
func splitAt(c *chacha20.Cipher, dst, src, cuts []byte) {
	for i := 0; len(src) > 0; i++ {
		n := len(src)
		if len(cuts) > 0 {
			n = min(n, int(cuts[i%len(cuts)]))
		}
		c.XORKeyStream(dst[:n], src[:n])
		dst, src = dst[n:], src[n:]
		if len(cuts) > 0 && i > 4*len(src)+len(cuts) {
			cuts = nil // all-zero cuts: finish in one call
		}
	}
}

// FuzzChunking: any split of a message into XORKeyStream calls gives the
// same bytes as one call.
func FuzzChunking(f *testing.F) {
	f.Add([]byte("key"), uint8(0), []byte("a message longer than one block of sixty-four bytes, so it has a tail"), []byte{1, 63, 64, 0, 7})
	f.Add([]byte{}, uint8(2), make([]byte, 300), []byte{65})
	f.Fuzz(func(t *testing.T, seed []byte, sel uint8, msg, cuts []byte) {
		want := make([]byte, len(msg))
		fuzzCipher(t, seed, sel).XORKeyStream(want, msg)
		got := make([]byte, len(msg))
		splitAt(fuzzCipher(t, seed, sel), got, msg, cuts)
		require.Equal(t, want, got)
	})
}

// FuzzSeekEqualsDiscarding: Seek(n) gives what a fresh cipher gives after
// discarding n bytes (n below 2^17, where discarding is cheap), and for any
// offset what SetCounter(n/64) gives after discarding n%64 bytes.
func FuzzSeekEqualsDiscarding(f *testing.F) {
	f.Add([]byte("key"), uint8(0), uint64(100), uint16(7))
	f.Add([]byte{1}, uint8(2), uint64(1<<32*64-3), uint16(200))
	f.Add([]byte{2}, uint8(1), uint64(1<<38-64), uint16(64))
	f.Fuzz(func(t *testing.T, seed []byte, sel uint8, offset uint64, n uint16) {
		_, nonceSize, _ := fuzzVariant(sel)
		if nonceSize != chacha20.NonceSizeDJB {
			offset %= 1 << 38 // the 32-bit counter's stream ends there
			n = uint16(min(uint64(n), 1<<38-offset))
		}
		c := fuzzCipher(t, seed, sel)
		c.Seek(offset)
		got := keystream(c, int(n))

		ref := fuzzCipher(t, seed, sel)
		ref.SetCounter(offset / 64)
		keystream(ref, int(offset%64))
		require.Equal(t, keystream(ref, int(n)), got, "SetCounter and discard")

		if offset < 1<<17 {
			ref := fuzzCipher(t, seed, sel)
			keystream(ref, int(offset))
			require.Equal(t, keystream(ref, int(n)), got, "discard")
		}
	})
}

// FuzzRoundTrip: decrypting with any chunking restores the message, and
// encrypting in place gives the same ciphertext as into a separate buffer.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("key"), uint8(1), []byte("attack at dawn"), []byte{3}, []byte{5})
	f.Add([]byte{9}, uint8(3), make([]byte, 200), []byte{}, []byte{64, 1})
	f.Add([]byte{}, uint8(2), []byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, seed []byte, sel uint8, msg, encCuts, decCuts []byte) {
		ct := make([]byte, len(msg))
		splitAt(fuzzCipher(t, seed, sel), ct, msg, encCuts)
		pt := make([]byte, len(ct))
		splitAt(fuzzCipher(t, seed, sel), pt, ct, decCuts)
		require.Equal(t, msg, pt)
		// In place gives the same ciphertext.
		buf := make([]byte, len(msg))
		copy(buf, msg)
		splitAt(fuzzCipher(t, seed, sel), buf, buf, decCuts)
		require.Equal(t, ct, buf)
	})
}
