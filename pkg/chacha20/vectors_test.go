package chacha20_test

import (
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Vector tests: every external case of testdata/vectors that fits this
// package, run on every kernel the CPU supports, each once in a single
// XORKeyStream call and once in random chunks. The round function and the
// raw block function are checked in internal/chachacore.

type rfc8439Vectors struct {
	Algorithm           string           `json:"algorithm"`
	Source              string           `json:"source"`
	Notes               string           `json:"notes"`
	QuarterRound        []map[string]any `json:"quarter_round"`
	QuarterRoundOnState []map[string]any `json:"quarter_round_on_state"`
	Block               []struct {
		ID        string       `json:"id"`
		Key       testutil.Hex `json:"key"`
		Nonce     testutil.Hex `json:"nonce"`
		Counter   uint32       `json:"counter"`
		Keystream testutil.Hex `json:"keystream"`
	} `json:"chacha20_block"`
	Encrypt []struct {
		ID         string       `json:"id"`
		Key        testutil.Hex `json:"key"`
		Nonce      testutil.Hex `json:"nonce"`
		Counter    uint32       `json:"counter"`
		Plaintext  testutil.Hex `json:"plaintext"`
		Ciphertext testutil.Hex `json:"ciphertext"`
	} `json:"chacha20_encrypt"`
	Poly1305    []map[string]any `json:"poly1305"`
	Poly1305Key []map[string]any `json:"poly1305_key_gen"`
	AEAD        []map[string]any `json:"aead_chacha20_poly1305"`
}

// checkXOR runs src through a cipher from newCipher, positioned by
// position, in one call and in random chunks, and compares with want.
func checkXOR(t *testing.T, id string, newCipher func() *chacha20.Cipher, position func(*chacha20.Cipher), src, want []byte) {
	t.Helper()
	c := newCipher()
	position(c)
	got := make([]byte, len(src))
	c.XORKeyStream(got, src)
	assert.Equal(t, want, got, "%s: one call", id)

	c = newCipher()
	position(c)
	got = make([]byte, len(src))
	xorInChunks(testutil.Rand(t), c, got, src)
	assert.Equal(t, want, got, "%s: in chunks", id)
}

// TestVectorsRFC8439 checks RFC 8439's block function examples (2.3.2,
// A.1) and encryption examples (2.4.2, A.2), each starting at the case's
// block counter.
func TestVectorsRFC8439(t *testing.T) {
	var v rfc8439Vectors
	testutil.LoadVectors(t, "rfc8439.json", &v)
	require.Len(t, v.Block, 6)
	require.Len(t, v.Encrypt, 4)
	forEachKernel(t, func(t *testing.T) {
		for _, c := range v.Block {
			newCipher := func() *chacha20.Cipher { return mustCipher(t, c.Key, c.Nonce, 20) }
			setCounter := func(s *chacha20.Cipher) { s.SetCounter(uint64(c.Counter)) }
			checkXOR(t, c.ID, newCipher, setCounter, make([]byte, len(c.Keystream)), c.Keystream)
		}
		for _, c := range v.Encrypt {
			newCipher := func() *chacha20.Cipher {
				s, err := chacha20.NewUnauthenticatedCipher(c.Key, c.Nonce)
				require.NoError(t, err)
				return s
			}
			setCounter := func(s *chacha20.Cipher) { s.SetCounter(uint64(c.Counter)) }
			checkXOR(t, c.ID, newCipher, setCounter, c.Plaintext, c.Ciphertext)
			checkXOR(t, c.ID+" decrypt", newCipher, setCounter, c.Ciphertext, c.Plaintext)
		}
	})
}

type xchachaVectors struct {
	Algorithm string            `json:"algorithm"`
	Sources   map[string]string `json:"sources"`
	Notes     string            `json:"notes"`
	HChaCha20 []struct {
		ID     string       `json:"id"`
		Source string       `json:"source"`
		Key    testutil.Hex `json:"key"`
		Input  testutil.Hex `json:"input"`
		Output testutil.Hex `json:"output"`
	} `json:"hchacha20"`
	XChaCha20 []struct {
		ID         string       `json:"id"`
		Source     string       `json:"source"`
		Key        testutil.Hex `json:"key"`
		Nonce      testutil.Hex `json:"nonce"`
		Counter    uint32       `json:"counter"`
		Plaintext  testutil.Hex `json:"plaintext"`
		Keystream  testutil.Hex `json:"keystream"`
		Ciphertext testutil.Hex `json:"ciphertext"`
	} `json:"xchacha20"`
	AEAD []map[string]any `json:"aead_xchacha20_poly1305"`
}

// TestVectorsXChaCha20 checks HChaCha20 and XChaCha20 against
// draft-irtf-cfrg-xchacha-03 and libsodium's xchacha20 tests: both the
// raw key stream and the encryption of the given plaintext.
func TestVectorsXChaCha20(t *testing.T) {
	var v xchachaVectors
	testutil.LoadVectors(t, "xchacha.json", &v)
	require.Len(t, v.HChaCha20, 11)
	require.Len(t, v.XChaCha20, 12)

	for _, c := range v.HChaCha20 {
		got, err := chacha20.HChaCha20(c.Key, c.Input)
		require.NoError(t, err, c.ID)
		assert.Equal(t, []byte(c.Output), got, c.ID)
	}
	forEachKernel(t, func(t *testing.T) {
		for _, c := range v.XChaCha20 {
			require.Len(t, c.Nonce, chacha20.NonceSizeX, c.ID)
			newCipher := func() *chacha20.Cipher {
				s, err := chacha20.NewUnauthenticatedCipher(c.Key, c.Nonce)
				require.NoError(t, err)
				return s
			}
			setCounter := func(s *chacha20.Cipher) { s.SetCounter(uint64(c.Counter)) }
			checkXOR(t, c.ID+" keystream", newCipher, setCounter, make([]byte, len(c.Keystream)), c.Keystream)
			checkXOR(t, c.ID, newCipher, setCounter, c.Plaintext, c.Ciphertext)
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

// checkKeystreamCase checks c's key stream slice, reaching bytes
// [offset, offset+len) of the stream that starts at block counter in two
// ways: Seek to the byte, and SetCounter to the block followed by
// discarding the bytes before the slice.
func checkKeystreamCase(t *testing.T, c keystreamCase) {
	t.Helper()
	newCipher := func() *chacha20.Cipher { return mustCipher(t, c.Key, c.Nonce, c.Rounds) }
	start := c.Counter*chacha20.BlockSize + c.Offset
	zeros := make([]byte, len(c.Keystream))
	checkXOR(t, c.ID+" (Seek)", newCipher, func(s *chacha20.Cipher) { s.Seek(start) }, zeros, c.Keystream)
	checkXOR(t, c.ID+" (SetCounter+discard)", newCipher, func(s *chacha20.Cipher) {
		s.SetCounter(start / chacha20.BlockSize)
		keystream(s, int(start%chacha20.BlockSize))
	}, zeros, c.Keystream)
}

// TestVectorsStrombergson checks draft-strombergson-chacha-test-vectors-01:
// ChaCha8/12/20 in the original layout with 128- and 256-bit keys.
func TestVectorsStrombergson(t *testing.T) {
	var v struct {
		Algorithm string          `json:"algorithm"`
		Source    string          `json:"source"`
		Notes     string          `json:"notes"`
		Cases     []keystreamCase `json:"cases"`
	}
	testutil.LoadVectors(t, "chacha_strombergson.json", &v)
	require.Len(t, v.Cases, 48)
	forEachKernel(t, func(t *testing.T) {
		for _, c := range v.Cases {
			require.Len(t, c.Nonce, chacha20.NonceSizeDJB, c.ID)
			checkKeystreamCase(t, c)
		}
	})
}

// TestVectorsDJBExtra checks Bernstein's reference chacha.c outputs (via
// Crypto++) and libsodium's: all-ones keys, slices at odd offsets, and
// streams that cross block 2^32 in the original layout, where the counter
// must carry into word 13; plus libsodium's IETF cases, one starting near
// the end of the 32-bit counter.
func TestVectorsDJBExtra(t *testing.T) {
	var v struct {
		Algorithm string            `json:"algorithm"`
		Sources   map[string]string `json:"sources"`
		Notes     string            `json:"notes"`
		DJB       []keystreamCase   `json:"djb_cases"`
		IETF      []keystreamCase   `json:"ietf_cases"`
	}
	testutil.LoadVectors(t, "chacha_djb_extra.json", &v)
	require.Len(t, v.DJB, 27)
	require.Len(t, v.IETF, 7)
	crossings := 0
	for _, c := range v.DJB {
		first := (c.Counter*64 + c.Offset) / 64
		last := (c.Counter*64 + c.Offset + uint64(len(c.Keystream)) - 1) / 64
		if first < 1<<32 && last >= 1<<32 {
			crossings++
		}
	}
	require.GreaterOrEqual(t, crossings, 9, "the file must exercise the carry into the high counter word")
	forEachKernel(t, func(t *testing.T) {
		for _, c := range v.DJB {
			require.Len(t, c.Nonce, chacha20.NonceSizeDJB, c.ID)
			checkKeystreamCase(t, c)
		}
		for _, c := range v.IETF {
			require.Len(t, c.Nonce, chacha20.NonceSize, c.ID)
			checkKeystreamCase(t, c)
		}
	})
}

// TestReferenceMatchesVectors holds the test's own reference block
// function (used for the variants x/crypto lacks) to the external vectors,
// so the differential tests built on it rest on known answers.
func TestReferenceMatchesVectors(t *testing.T) {
	var s struct {
		Algorithm string          `json:"algorithm"`
		Source    string          `json:"source"`
		Notes     string          `json:"notes"`
		Cases     []keystreamCase `json:"cases"`
	}
	testutil.LoadVectors(t, "chacha_strombergson.json", &s)
	var d struct {
		Algorithm string            `json:"algorithm"`
		Sources   map[string]string `json:"sources"`
		Notes     string            `json:"notes"`
		DJB       []keystreamCase   `json:"djb_cases"`
		IETF      []keystreamCase   `json:"ietf_cases"`
	}
	testutil.LoadVectors(t, "chacha_djb_extra.json", &d)
	all := append(append(s.Cases, d.DJB...), d.IETF...)
	require.Len(t, all, 48+27+7)
	for _, c := range all {
		got := refStream(c.Key, c.Nonce, c.Counter, c.Offset, c.Rounds, len(c.Keystream))
		assert.Equal(t, []byte(c.Keystream), got, c.ID)
	}
}
