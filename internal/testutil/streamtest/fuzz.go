package streamtest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The fuzz bodies below take the family's variant from a fuzzer byte and
// its key and nonce from the fuzzer's seed bytes, cut or zero-padded to
// size. Each adds the seeds every family shares; a package adds its own
// before calling.

// fuzzVariant maps a fuzzer byte to one of the family's variants.
func (fam Family) fuzzVariant(sel uint8) Variant {
	return fam.Variants[int(sel)%len(fam.Variants)]
}

// fuzzCipher builds a cipher of the selected variant from the seed bytes.
func (fam Family) fuzzCipher(t *testing.T, seed []byte, sel uint8) Stream {
	v := fam.fuzzVariant(sel)
	material := make([]byte, v.KeySize+v.NonceSize)
	copy(material, seed)
	return fam.must(t, material[:v.KeySize], material[v.KeySize:], v.Rounds)
}

// splitAt XORs src into dst through c in calls whose lengths come from
// cuts (one byte each, cycled), so the fuzzer controls the chunking.
func splitAt(c Stream, dst, src, cuts []byte) {
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

// FuzzChunking fuzzes that any split of a message into XORKeyStream calls
// gives the same bytes as one call.
func FuzzChunking(f *testing.F, fam Family) {
	f.Add([]byte("key"), uint8(0), []byte("a message longer than one block of sixty-four bytes, so it has a tail"), []byte{1, 63, 64, 0, 7})
	f.Add([]byte{}, uint8(2), make([]byte, 300), []byte{65})
	f.Fuzz(func(t *testing.T, seed []byte, sel uint8, msg, cuts []byte) {
		want := make([]byte, len(msg))
		fam.fuzzCipher(t, seed, sel).XORKeyStream(want, msg)
		got := make([]byte, len(msg))
		splitAt(fam.fuzzCipher(t, seed, sel), got, msg, cuts)
		require.Equal(t, want, got)
	})
}

// FuzzSeekEqualsDiscarding fuzzes that Seek(n) gives what a fresh cipher
// gives after discarding n bytes (n below 2^17, where discarding is
// cheap), and for any offset what SetCounter(n/64) gives after discarding
// n%64 bytes. With a 32-bit counter the offset is kept inside the stream.
func FuzzSeekEqualsDiscarding(f *testing.F, fam Family) {
	f.Add([]byte("key"), uint8(0), uint64(100), uint16(7))
	f.Fuzz(func(t *testing.T, seed []byte, sel uint8, offset uint64, n uint16) {
		if fam.fuzzVariant(sel).CounterBits == 32 {
			offset %= 1 << 38 // the 32-bit counter's stream ends there
			n = uint16(min(uint64(n), 1<<38-offset))
		}
		c := fam.fuzzCipher(t, seed, sel)
		c.Seek(offset)
		got := Keystream(c, int(n))

		ref := fam.fuzzCipher(t, seed, sel)
		ref.SetCounter(offset / 64)
		Keystream(ref, int(offset%64))
		require.Equal(t, Keystream(ref, int(n)), got, "SetCounter and discard")

		if offset < 1<<17 {
			ref := fam.fuzzCipher(t, seed, sel)
			Keystream(ref, int(offset))
			require.Equal(t, Keystream(ref, int(n)), got, "discard")
		}
	})
}

// FuzzRoundTrip fuzzes that decrypting with any chunking restores the
// message, and that encrypting in place gives the same ciphertext as into
// a separate buffer.
func FuzzRoundTrip(f *testing.F, fam Family) {
	f.Add([]byte("key"), uint8(1), []byte("attack at dawn"), []byte{3}, []byte{5})
	f.Add([]byte{9}, uint8(3), make([]byte, 200), []byte{}, []byte{64, 1})
	f.Add([]byte{}, uint8(2), []byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, seed []byte, sel uint8, msg, encCuts, decCuts []byte) {
		ct := make([]byte, len(msg))
		splitAt(fam.fuzzCipher(t, seed, sel), ct, msg, encCuts)
		pt := make([]byte, len(ct))
		splitAt(fam.fuzzCipher(t, seed, sel), pt, ct, decCuts)
		require.Equal(t, msg, pt)
		// In place gives the same ciphertext.
		buf := make([]byte, len(msg))
		copy(buf, msg)
		splitAt(fam.fuzzCipher(t, seed, sel), buf, buf, decCuts)
		require.Equal(t, ct, buf)
	})
}
