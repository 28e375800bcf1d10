package salsa20_test

import (
	"crypto/sha256"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/salsa20"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Vector tests: every external case of testdata/vectors that fits this
// package, run on every kernel the CPU supports, each in one XORKeyStream
// call and in random chunks. The round functions, the raw block function
// and HSalsa are also checked inside internal/salsacore.

// xorBothWays runs src through a cipher from newCipher, positioned by
// position, in one call and in random chunks; both results must be equal
// and are returned for checking.
func xorBothWays(t *testing.T, newCipher func() *salsa20.Cipher, position func(*salsa20.Cipher), src []byte) []byte {
	t.Helper()
	c := newCipher()
	position(c)
	got := make([]byte, len(src))
	c.XORKeyStream(got, src)

	c = newCipher()
	position(c)
	chunked := make([]byte, len(src))
	xorInChunks(testutil.Rand(t), c, chunked, src)
	require.Equal(t, got, chunked, "one call and chunks differ")
	return got
}

func atCounter(counter uint64) func(*salsa20.Cipher) {
	return func(c *salsa20.Cipher) { c.SetCounter(counter) }
}

// TestVectorsESTREAM checks the eSTREAM Salsa20/20 verified test vectors
// (sets 1-6, 128- and 256-bit keys): four 64-byte slices of each stream
// and the XOR of all its 64-byte blocks (512 bytes, or 128 KiB for sets 4
// and 6, which spans two 64 KiB kernel calls).
func TestVectorsESTREAM(t *testing.T) {
	var v struct {
		Algorithm string `json:"algorithm"`
		Source    string `json:"source"`
		Notes     string `json:"notes"`
		Cases     []struct {
			ID           string       `json:"id"`
			Rounds       int          `json:"rounds"`
			Key          testutil.Hex `json:"key"`
			Nonce        testutil.Hex `json:"nonce"`
			Counter      uint64       `json:"counter"`
			StreamLength int          `json:"stream_length"`
			Slices       []struct {
				Offset    int          `json:"offset"`
				Keystream testutil.Hex `json:"keystream"`
			} `json:"slices"`
			XORDigest testutil.Hex `json:"xor_digest"`
		} `json:"cases"`
	}
	testutil.LoadVectors(t, "salsa20_estream.json", &v)
	require.Len(t, v.Cases, 192)
	forEachKernel(t, func(t *testing.T) {
		for _, c := range v.Cases {
			require.Equal(t, 20, c.Rounds, c.ID)
			newCipher := func() *salsa20.Cipher { return mustCipher(t, c.Key, c.Nonce, c.Rounds) }
			stream := xorBothWays(t, newCipher, atCounter(c.Counter), make([]byte, c.StreamLength))
			require.Len(t, c.Slices, 4, c.ID)
			for _, s := range c.Slices {
				assert.Equal(t, []byte(s.Keystream), stream[s.Offset:s.Offset+len(s.Keystream)], "%s: slice at %d", c.ID, s.Offset)
			}
			var digest [64]byte
			for i := 0; i < len(stream); i += 64 {
				for j := range digest {
					digest[j] ^= stream[i+j]
				}
			}
			assert.Equal(t, []byte(c.XORDigest), digest[:], "%s: xor digest", c.ID)
		}
	})
}

type keystreamCase struct {
	ID        string       `json:"id"`
	Source    string       `json:"source"`
	Rounds    int          `json:"rounds"`
	Key       testutil.Hex `json:"key"`
	Nonce     testutil.Hex `json:"nonce"`
	Counter   uint64       `json:"counter"`
	Offset    uint64       `json:"offset"`
	Keystream testutil.Hex `json:"keystream"`
}

type sha256Case struct {
	ID              string       `json:"id"`
	Source          string       `json:"source"`
	Rounds          int          `json:"rounds"`
	Key             testutil.Hex `json:"key"`
	Nonce           testutil.Hex `json:"nonce"`
	Counter         uint64       `json:"counter"`
	Length          int          `json:"length"`
	KeystreamSHA256 testutil.Hex `json:"keystream_sha256"`
}

// checkKeystreamCase checks the slice [offset, offset+len) of the stream
// from block counter, reached by Seek and by SetCounter plus discarding.
func checkKeystreamCase(t *testing.T, c keystreamCase) {
	t.Helper()
	newCipher := func() *salsa20.Cipher { return mustCipher(t, c.Key, c.Nonce, c.Rounds) }
	start := c.Counter*salsa20.BlockSize + c.Offset
	zeros := make([]byte, len(c.Keystream))
	got := xorBothWays(t, newCipher, func(s *salsa20.Cipher) { s.Seek(start) }, zeros)
	assert.Equal(t, []byte(c.Keystream), got, "%s (Seek)", c.ID)
	got = xorBothWays(t, newCipher, func(s *salsa20.Cipher) {
		s.SetCounter(start / salsa20.BlockSize)
		keystream(s, int(start%salsa20.BlockSize))
	}, zeros)
	assert.Equal(t, []byte(c.Keystream), got, "%s (SetCounter+discard)", c.ID)
}

// checkSHA256Case checks the SHA-256 of the first length bytes of key
// stream from block counter.
func checkSHA256Case(t *testing.T, c sha256Case, newCipher func() *salsa20.Cipher) {
	t.Helper()
	stream := xorBothWays(t, newCipher, atCounter(c.Counter), make([]byte, c.Length))
	sum := sha256.Sum256(stream)
	assert.Equal(t, []byte(c.KeystreamSHA256), sum[:], c.ID)
}

// TestVectorsReduced checks Salsa20/12 and Salsa20/8: eSTREAM slices via
// Bouncy Castle, Crypto++ and Nettle, libsodium's SHA-256 of 4 MiB of key
// stream, and (through Core) RFC 7914's Salsa20/8 core.
func TestVectorsReduced(t *testing.T) {
	var v struct {
		Algorithm string            `json:"algorithm"`
		Sources   map[string]string `json:"sources"`
		Notes     string            `json:"notes"`
		Keystream []keystreamCase   `json:"keystream_cases"`
		SHA256    []sha256Case      `json:"sha256_cases"`
		Core      []struct {
			ID     string       `json:"id"`
			Source string       `json:"source"`
			Rounds int          `json:"rounds"`
			Input  testutil.Hex `json:"input"`
			Output testutil.Hex `json:"output"`
		} `json:"core_cases"`
	}
	testutil.LoadVectors(t, "salsa20_reduced.json", &v)
	require.Len(t, v.Keystream, 18)
	require.Len(t, v.SHA256, 2)
	require.Len(t, v.Core, 1)
	for _, c := range v.Core {
		var in, out [64]byte
		copy(in[:], c.Input)
		salsa20.Core(&out, &in, c.Rounds)
		assert.Equal(t, []byte(c.Output), out[:], c.ID)
	}
	forEachKernel(t, func(t *testing.T) {
		for _, c := range v.Keystream {
			checkKeystreamCase(t, c)
		}
		for _, c := range v.SHA256 {
			checkSHA256Case(t, c, func() *salsa20.Cipher { return mustCipher(t, c.Key, c.Nonce, c.Rounds) })
		}
	})
}

// TestVectorsExtra checks Salsa20/20 streams that cross block 2^32 (the
// counter must carry from word 8 into word 9) and libsodium's SHA-256 of
// 4 MiB of key stream.
func TestVectorsExtra(t *testing.T) {
	var v struct {
		Algorithm string            `json:"algorithm"`
		Sources   map[string]string `json:"sources"`
		Notes     string            `json:"notes"`
		Keystream []keystreamCase   `json:"keystream_cases"`
		SHA256    []sha256Case      `json:"sha256_cases"`
	}
	testutil.LoadVectors(t, "salsa20_extra.json", &v)
	require.Len(t, v.Keystream, 3)
	require.Len(t, v.SHA256, 1)
	for _, c := range v.Keystream {
		first := (c.Counter*64 + c.Offset) / 64
		last := (c.Counter*64 + c.Offset + uint64(len(c.Keystream)) - 1) / 64
		require.True(t, first < 1<<32 && last >= 1<<32, "%s must cross block 2^32", c.ID)
	}
	forEachKernel(t, func(t *testing.T) {
		for _, c := range v.Keystream {
			checkKeystreamCase(t, c)
		}
		for _, c := range v.SHA256 {
			checkSHA256Case(t, c, func() *salsa20.Cipher { return mustCipher(t, c.Key, c.Nonce, c.Rounds) })
		}
	})
}

// TestVectorsXSalsa20 checks HSalsa20 (NaCl core1/2/5) and XSalsa20:
// Crypto++'s and x/crypto's encryptions, NaCl's streams including those
// starting just below block 2^32 and running into the high counter word,
// and NaCl's SHA-256 of 4 MiB of key stream.
func TestVectorsXSalsa20(t *testing.T) {
	var v struct {
		Algorithm string            `json:"algorithm"`
		Sources   map[string]string `json:"sources"`
		Notes     string            `json:"notes"`
		HSalsa20  []struct {
			ID     string       `json:"id"`
			Source string       `json:"source"`
			Key    testutil.Hex `json:"key"`
			Input  testutil.Hex `json:"input"`
			Output testutil.Hex `json:"output"`
		} `json:"hsalsa20"`
		XSalsa20 []struct {
			ID         string       `json:"id"`
			Source     string       `json:"source"`
			Key        testutil.Hex `json:"key"`
			Nonce      testutil.Hex `json:"nonce"`
			Counter    uint64       `json:"counter"`
			Plaintext  testutil.Hex `json:"plaintext"`
			Ciphertext testutil.Hex `json:"ciphertext"`
		} `json:"xsalsa20"`
		SHA256 []struct {
			ID              string       `json:"id"`
			Source          string       `json:"source"`
			Key             testutil.Hex `json:"key"`
			Nonce           testutil.Hex `json:"nonce"`
			Counter         uint64       `json:"counter"`
			Length          int          `json:"length"`
			KeystreamSHA256 testutil.Hex `json:"keystream_sha256"`
		} `json:"sha256_cases"`
	}
	testutil.LoadVectors(t, "xsalsa20.json", &v)
	require.Len(t, v.HSalsa20, 3)
	require.Len(t, v.XSalsa20, 116)
	require.Len(t, v.SHA256, 1)

	for _, c := range v.HSalsa20 {
		got, err := salsa20.HSalsa20(c.Key, c.Input)
		require.NoError(t, err, c.ID)
		assert.Equal(t, []byte(c.Output), got, c.ID)
	}
	crossings := 0
	for _, c := range v.XSalsa20 {
		if c.Counter < 1<<32 && c.Counter+uint64(len(c.Plaintext)+63)/64 > 1<<32 {
			crossings++
		}
	}
	require.GreaterOrEqual(t, crossings, 16, "the NaCl cases must cross block 2^32")
	forEachKernel(t, func(t *testing.T) {
		for _, c := range v.XSalsa20 {
			require.Len(t, c.Nonce, salsa20.NonceSizeX, c.ID)
			newCipher := func() *salsa20.Cipher { return mustCipher(t, c.Key, c.Nonce, 20) }
			got := xorBothWays(t, newCipher, atCounter(c.Counter), c.Plaintext)
			assert.Equal(t, []byte(c.Ciphertext), got, c.ID)
			got = xorBothWays(t, newCipher, atCounter(c.Counter), c.Ciphertext)
			assert.Equal(t, []byte(c.Plaintext), got, "%s: decrypt", c.ID)
		}
		for _, c := range v.SHA256 {
			sc := sha256Case{ID: c.ID, Rounds: 20, Key: c.Key, Nonce: c.Nonce, Counter: c.Counter, Length: c.Length, KeystreamSHA256: c.KeystreamSHA256}
			checkSHA256Case(t, sc, func() *salsa20.Cipher {
				s, err := salsa20.NewCipher(c.Key, c.Nonce)
				require.NoError(t, err)
				return s
			})
		}
	})
}

// TestVectorsSpecCore checks the public Core on the specification's
// Salsa20 hash examples.
func TestVectorsSpecCore(t *testing.T) {
	var v struct {
		Algorithm    string           `json:"algorithm"`
		Source       string           `json:"source"`
		Notes        string           `json:"notes"`
		QuarterRound []map[string]any `json:"quarterround"`
		RowRound     []map[string]any `json:"rowround"`
		ColumnRound  []map[string]any `json:"columnround"`
		DoubleRound  []map[string]any `json:"doubleround"`
		LittleEndian []map[string]any `json:"littleendian"`
		Core         []struct {
			Input  testutil.Hex `json:"input"`
			Output testutil.Hex `json:"output"`
		} `json:"salsa20_core"`
		Expansion []struct {
			Key             testutil.Hex `json:"key"`
			NonceAndCounter testutil.Hex `json:"nonce_and_counter"`
			Output          testutil.Hex `json:"output"`
		} `json:"salsa20_expansion"`
	}
	testutil.LoadVectors(t, "salsa20_spec.json", &v)
	require.Len(t, v.Core, 3)
	for i, c := range v.Core {
		var in, out [64]byte
		copy(in[:], c.Input)
		salsa20.Core(&out, &in, 20)
		assert.Equal(t, []byte(c.Output), out[:], "core example %d", i)
	}
	// The expansion examples through the public cipher: the 16-byte input
	// is the nonce followed by the little-endian block counter.
	forEachKernel(t, func(t *testing.T) {
		for i, c := range v.Expansion {
			s := mustCipher(t, c.Key, c.NonceAndCounter[:8], 20)
			var ctr uint64
			for j := 15; j >= 8; j-- {
				ctr = ctr<<8 | uint64(c.NonceAndCounter[j])
			}
			s.SetCounter(ctr)
			assert.Equal(t, []byte(c.Output), keystream(s, 64), "expansion example %d", i)
		}
	})
}

// TestReferenceMatchesVectors holds the test's own reference block
// function (used for Salsa20/12 and 128-bit keys in the differential
// tests) to the external reduced-round and counter-crossing vectors.
func TestReferenceMatchesVectors(t *testing.T) {
	var red, extra struct {
		Algorithm string            `json:"algorithm"`
		Sources   map[string]string `json:"sources"`
		Notes     string            `json:"notes"`
		Keystream []keystreamCase   `json:"keystream_cases"`
		SHA256    []sha256Case      `json:"sha256_cases"`
		Core      []map[string]any  `json:"core_cases"`
	}
	testutil.LoadVectors(t, "salsa20_reduced.json", &red)
	testutil.LoadVectors(t, "salsa20_extra.json", &extra)
	all := append(red.Keystream, extra.Keystream...)
	require.Len(t, all, 21)
	for _, c := range all {
		start := c.Counter*64 + c.Offset
		got := refStream(c.Key, c.Nonce, start/64, int(start%64), c.Rounds, len(c.Keystream))
		assert.Equal(t, []byte(c.Keystream), got, c.ID)
	}
}
