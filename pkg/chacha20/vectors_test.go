package chacha20_test

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/streamtest"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Vector tests: every external case of testdata/vectors that fits this
// package, run on every kernel the CPU supports, each once in a single
// XORKeyStream call and once in random chunks. The round function and the
// raw block function are checked in internal/chachacore.

// TestVectorsRFC8439 checks RFC 8439's block function examples (2.3.2,
// A.1) and encryption examples (2.4.2, A.2), each starting at the case's
// block counter.
func TestVectorsRFC8439(t *testing.T) {
	var v testutil.RFC8439
	testutil.LoadVectors(t, "rfc8439.json", &v)
	require.Len(t, v.Block, 6)
	require.Len(t, v.Encrypt, 4)
	family.ForEachKernel(t, func(t *testing.T) {
		for _, c := range v.Block {
			newCipher := func() *chacha20.Cipher { return mustCipher(t, c.Key, c.Nonce, 20) }
			setCounter := func(s *chacha20.Cipher) { s.SetCounter(c.Counter) }
			streamtest.CheckXOR(t, c.ID, newCipher, setCounter, make([]byte, len(c.Keystream)), c.Keystream)
		}
		for _, c := range v.Encrypt {
			newCipher := func() *chacha20.Cipher {
				s, err := chacha20.NewUnauthenticatedCipher(c.Key, c.Nonce)
				require.NoError(t, err)
				return s
			}
			setCounter := func(s *chacha20.Cipher) { s.SetCounter(c.Counter) }
			streamtest.CheckXOR(t, c.ID, newCipher, setCounter, c.Plaintext, c.Ciphertext)
			streamtest.CheckXOR(t, c.ID+" decrypt", newCipher, setCounter, c.Ciphertext, c.Plaintext)
		}
	})
}

// TestVectorsXChaCha20 checks HChaCha20 and XChaCha20 against
// draft-irtf-cfrg-xchacha-03 and libsodium's xchacha20 tests: both the
// raw key stream and the encryption of the given plaintext.
func TestVectorsXChaCha20(t *testing.T) {
	var v testutil.XChaCha
	testutil.LoadVectors(t, "xchacha.json", &v)
	require.Len(t, v.HChaCha20, 11)
	require.Len(t, v.XChaCha20, 12)

	testutil.CheckHashCases(t, v.HChaCha20, chacha20.HChaCha20)
	family.ForEachKernel(t, func(t *testing.T) {
		for _, c := range v.XChaCha20 {
			require.Len(t, c.Nonce, chacha20.NonceSizeX, c.ID)
			newCipher := func() *chacha20.Cipher {
				s, err := chacha20.NewUnauthenticatedCipher(c.Key, c.Nonce)
				require.NoError(t, err)
				return s
			}
			setCounter := func(s *chacha20.Cipher) { s.SetCounter(c.Counter) }
			streamtest.CheckXOR(t, c.ID+" keystream", newCipher, setCounter, make([]byte, len(c.Keystream)), c.Keystream)
			streamtest.CheckXOR(t, c.ID, newCipher, setCounter, c.Plaintext, c.Ciphertext)
		}
	})
}

// strombergsonVectors is testdata/vectors/chacha_strombergson.json.
type strombergsonVectors struct {
	testutil.Header
	Cases []testutil.KeystreamCase `json:"cases"`
}

// djbExtraVectors is testdata/vectors/chacha_djb_extra.json.
type djbExtraVectors struct {
	testutil.Header
	DJB  []testutil.KeystreamCase `json:"djb_cases"`
	IETF []testutil.KeystreamCase `json:"ietf_cases"`
}

// checkKeystreamCases checks each case (streamtest.CheckKeystreamCase),
// requiring its nonce to be nonceSize bytes.
func checkKeystreamCases(t *testing.T, cases []testutil.KeystreamCase, nonceSize int) {
	t.Helper()
	for _, c := range cases {
		require.Len(t, c.Nonce, nonceSize, c.ID)
		streamtest.CheckKeystreamCase(t, c, mustCipher)
	}
}

// TestVectorsStrombergson checks draft-strombergson-chacha-test-vectors-01:
// ChaCha8/12/20 in the original layout with 128- and 256-bit keys.
func TestVectorsStrombergson(t *testing.T) {
	var v strombergsonVectors
	testutil.LoadVectors(t, "chacha_strombergson.json", &v)
	require.Len(t, v.Cases, 48)
	family.ForEachKernel(t, func(t *testing.T) {
		checkKeystreamCases(t, v.Cases, chacha20.NonceSizeDJB)
	})
}

// TestVectorsDJBExtra checks Bernstein's reference chacha.c outputs (via
// Crypto++) and libsodium's: all-ones keys, slices at odd offsets, and
// streams that cross block 2^32 in the original layout, where the counter
// must carry into word 13; plus libsodium's IETF cases, one starting near
// the end of the 32-bit counter.
func TestVectorsDJBExtra(t *testing.T) {
	var v djbExtraVectors
	testutil.LoadVectors(t, "chacha_djb_extra.json", &v)
	require.Len(t, v.DJB, 27)
	require.Len(t, v.IETF, 7)
	crossings := 0
	for _, c := range v.DJB {
		if c.CrossesBlock(1 << 32) {
			crossings++
		}
	}
	require.GreaterOrEqual(t, crossings, 9, "the file must exercise the carry into the high counter word")
	family.ForEachKernel(t, func(t *testing.T) {
		checkKeystreamCases(t, v.DJB, chacha20.NonceSizeDJB)
		checkKeystreamCases(t, v.IETF, chacha20.NonceSize)
	})
}

// TestReferenceMatchesVectors holds the test's own reference block
// function (used for the variants x/crypto lacks) to the external vectors,
// so the differential tests built on it rest on known answers.
func TestReferenceMatchesVectors(t *testing.T) {
	var s strombergsonVectors
	testutil.LoadVectors(t, "chacha_strombergson.json", &s)
	var d djbExtraVectors
	testutil.LoadVectors(t, "chacha_djb_extra.json", &d)
	all := append(append(s.Cases, d.DJB...), d.IETF...)
	require.Len(t, all, 48+27+7)
	for _, c := range all {
		got := refStream(c.Key, c.Nonce, c.Counter, c.Offset, c.Rounds, len(c.Keystream))
		assert.Equal(t, []byte(c.Keystream), got, c.ID)
	}
}
