package salsa20_test

import (
	"crypto/sha256"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
	"github.com/spipe-dev/spipe/pkg/salsa20"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Vector tests: every external case of testdata/vectors that fits this
// package, run on every kernel the CPU supports, each in one XORKeyStream
// call and in random chunks. The round functions, the raw block function
// and HSalsa are also checked inside internal/salsacore.

// TestVectorsESTREAM checks the eSTREAM Salsa20/20 verified test vectors
// (sets 1-6, 128- and 256-bit keys): four 64-byte slices of each stream
// and the XOR of all its 64-byte blocks (512 bytes, or 128 KiB for sets 4
// and 6, which spans two 64 KiB kernel calls).
func TestVectorsESTREAM(t *testing.T) {
	var v struct {
		testutil.Header
		Cases []struct {
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
	family.ForEachKernel(t, func(t *testing.T) {
		for _, c := range v.Cases {
			require.Equal(t, 20, c.Rounds, c.ID)
			newCipher := func() *salsa20.Cipher { return mustCipher(t, c.Key, c.Nonce, c.Rounds) }
			stream := streamtest.XORBothWays(t, newCipher, streamtest.AtCounter[*salsa20.Cipher](c.Counter), make([]byte, c.StreamLength))
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

// checkSHA256Case checks the SHA-256 of the first length bytes of key
// stream from block counter.
func checkSHA256Case(t *testing.T, c testutil.SHA256Case, newCipher func() *salsa20.Cipher) {
	t.Helper()
	stream := streamtest.XORBothWays(t, newCipher, streamtest.AtCounter[*salsa20.Cipher](c.Counter), make([]byte, c.Length))
	sum := sha256.Sum256(stream)
	assert.Equal(t, []byte(c.KeystreamSHA256), sum[:], c.ID)
}

// checkStreams checks v's key stream slices and SHA-256 cases on every
// kernel.
func checkStreams(t *testing.T, v testutil.SalsaStreams) {
	family.ForEachKernel(t, func(t *testing.T) {
		for _, c := range v.Keystream {
			streamtest.CheckKeystreamCase(t, c, mustCipher)
		}
		for _, c := range v.SHA256 {
			checkSHA256Case(t, c, func() *salsa20.Cipher { return mustCipher(t, c.Key, c.Nonce, c.Rounds) })
		}
	})
}

// TestVectorsReduced checks Salsa20/12 and Salsa20/8: eSTREAM slices via
// Bouncy Castle, Crypto++ and Nettle, libsodium's SHA-256 of 4 MiB of key
// stream, and (through Core) RFC 7914's Salsa20/8 core.
func TestVectorsReduced(t *testing.T) {
	var v testutil.SalsaStreams
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
	checkStreams(t, v)
}

// TestVectorsExtra checks Salsa20/20 streams that cross block 2^32 (the
// counter must carry from word 8 into word 9) and libsodium's SHA-256 of
// 4 MiB of key stream.
func TestVectorsExtra(t *testing.T) {
	var v testutil.SalsaStreams
	testutil.LoadVectors(t, "salsa20_extra.json", &v)
	require.Len(t, v.Keystream, 3)
	require.Len(t, v.SHA256, 1)
	for _, c := range v.Keystream {
		require.True(t, c.CrossesBlock(1<<32), "%s must cross block 2^32", c.ID)
	}
	checkStreams(t, v)
}

// TestVectorsXSalsa20 checks HSalsa20 (NaCl core1/2/5) and XSalsa20:
// Crypto++'s and x/crypto's encryptions, NaCl's streams including those
// starting just below block 2^32 and running into the high counter word,
// and NaCl's SHA-256 of 4 MiB of key stream.
func TestVectorsXSalsa20(t *testing.T) {
	var v testutil.XSalsa20
	testutil.LoadVectors(t, "xsalsa20.json", &v)
	require.Len(t, v.HSalsa20, 3)
	require.Len(t, v.XSalsa20, 116)
	require.Len(t, v.SHA256, 1)

	testutil.CheckHashCases(t, v.HSalsa20, salsa20.HSalsa20)
	crossings := 0
	for _, c := range v.XSalsa20 {
		if c.Counter < 1<<32 && c.Counter+uint64(len(c.Plaintext)+63)/64 > 1<<32 {
			crossings++
		}
	}
	require.GreaterOrEqual(t, crossings, 16, "the NaCl cases must cross block 2^32")
	family.ForEachKernel(t, func(t *testing.T) {
		for _, c := range v.XSalsa20 {
			require.Len(t, c.Nonce, salsa20.NonceSizeX, c.ID)
			newCipher := func() *salsa20.Cipher { return mustCipher(t, c.Key, c.Nonce, 20) }
			at := streamtest.AtCounter[*salsa20.Cipher](c.Counter)
			streamtest.CheckXOR(t, c.ID, newCipher, at, c.Plaintext, c.Ciphertext)
			streamtest.CheckXOR(t, c.ID+" decrypt", newCipher, at, c.Ciphertext, c.Plaintext)
		}
		for _, c := range v.SHA256 {
			checkSHA256Case(t, c, func() *salsa20.Cipher {
				s, err := salsa20.NewUnauthenticatedCipher(c.Key, c.Nonce)
				require.NoError(t, err)
				return s
			})
		}
	})
}

// TestVectorsSpecCore checks the public Core on the specification's
// Salsa20 hash examples.
func TestVectorsSpecCore(t *testing.T) {
	var v testutil.SalsaSpec
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
	family.ForEachKernel(t, func(t *testing.T) {
		for i, c := range v.Expansion {
			s := mustCipher(t, c.Key, c.NonceAndCounter[:8], 20)
			var ctr uint64
			for j := 15; j >= 8; j-- {
				ctr = ctr<<8 | uint64(c.NonceAndCounter[j])
			}
			s.SetCounter(ctr)
			assert.Equal(t, []byte(c.Output), streamtest.Keystream(s, 64), "expansion example %d", i)
		}
	})
}

// TestReferenceMatchesVectors holds the test's own reference block
// function (used for Salsa20/12 and 128-bit keys in the differential
// tests) to the external reduced-round and counter-crossing vectors.
func TestReferenceMatchesVectors(t *testing.T) {
	var red, extra testutil.SalsaStreams
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
