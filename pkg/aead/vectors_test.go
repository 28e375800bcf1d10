package aead

import (
	"crypto/cipher"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// wycheproofFile is the part of a Wycheproof AEAD test file the tests read;
// the rest is declared raw so the strict loader accepts it.
type wycheproofFile struct {
	Algorithm     string          `json:"algorithm"`
	Schema        string          `json:"schema"`
	NumberOfTests int             `json:"numberOfTests"`
	Header        json.RawMessage `json:"header"`
	Notes         json.RawMessage `json:"notes"`
	TestGroups    []struct {
		IVSize  int             `json:"ivSize"`
		KeySize int             `json:"keySize"`
		TagSize int             `json:"tagSize"`
		Type    string          `json:"type"`
		Source  json.RawMessage `json:"source"`
		Tests   []struct {
			TcID    int          `json:"tcId"`
			Comment string       `json:"comment"`
			Flags   []string     `json:"flags"`
			Key     testutil.Hex `json:"key"`
			IV      testutil.Hex `json:"iv"`
			AAD     testutil.Hex `json:"aad"`
			Msg     testutil.Hex `json:"msg"`
			CT      testutil.Hex `json:"ct"`
			Tag     testutil.Hex `json:"tag"`
			Result  string       `json:"result"`
		} `json:"tests"`
	} `json:"testGroups"`
}

// TestWycheproof runs every case of Wycheproof's ChaCha20-Poly1305 and
// XChaCha20-Poly1305 files, valid and invalid, on every kernel. A valid
// case must seal to its ciphertext and tag and open to its message; an
// invalid one must fail Open and leave dst untouched (a nonce of another
// size must make Seal and Open panic); an acceptable one may fail, but if
// it opens it must give its message.
func TestWycheproof(t *testing.T) {
	for _, tc := range []struct {
		file  string
		suite Suite
	}{
		{"wycheproof/chacha20_poly1305_test.json", ChaCha20Poly1305},
		{"wycheproof/xchacha20_poly1305_test.json", XChaCha20Poly1305},
	} {
		t.Run(tc.suite.String(), func(t *testing.T) {
			var f wycheproofFile
			testutil.LoadVectors(t, tc.file, &f)
			forEachKernel(t, tc.suite, func(t *testing.T) {
				seen := map[string]int{}
				for _, g := range f.TestGroups {
					require.Equal(t, 128, g.TagSize, "only 128-bit tags exist for these AEADs")
					for _, v := range g.Tests {
						require.Equal(t, g.IVSize, 8*len(v.IV), "tc %d", v.TcID)
						runWycheproofCase(t, tc.suite, v.TcID, v.Key, v.IV, v.AAD, v.Msg, v.CT, v.Tag, v.Result)
						seen[v.Result]++
					}
				}
				total := seen["valid"] + seen["invalid"] + seen["acceptable"]
				assert.Equal(t, f.NumberOfTests, total, "every case run, results %v", seen)
				assert.Positive(t, seen["valid"])
				assert.Positive(t, seen["invalid"])
			})
		})
	}
}

func runWycheproofCase(t *testing.T, suite Suite, id int, key, iv, aad, msg, ct, tag []byte, result string) {
	t.Helper()
	name := fmt.Sprintf("tc %d (%s)", id, result)
	a, err := New(suite, key)
	if err != nil {
		assert.Equal(t, "invalid", result, "%s: constructor refused a %s case: %v", name, result, err)
		return
	}
	box := concat(ct, tag)
	dst := sentinel(len(msg) + 32)
	if len(iv) != a.NonceSize() {
		assert.Equal(t, "invalid", result, name)
		assert.Panics(t, func() { _, _ = a.Open(dst, iv, box, aad) }, name)
		assert.Panics(t, func() { a.Seal(nil, iv, msg, aad) }, name)
		assert.True(t, untouched(dst), "%s: dst written", name)
		return
	}
	pt, openErr := a.Open(dst, iv, box, aad)
	switch result {
	case "valid":
		require.NoError(t, openErr, name)
		assertBytes(t, msg, pt, name)
		assert.Equal(t, box, a.Seal(nil, iv, msg, aad), name)
	case "invalid":
		assert.ErrorIs(t, openErr, ErrOpen, name)
		assert.Nil(t, pt, name)
		assert.True(t, untouched(dst), "%s: a failed Open wrote to dst", name)
		assert.NotEqual(t, box, a.Seal(nil, iv, msg, aad), "%s: Seal produced a forgery", name)
	case "acceptable":
		if openErr == nil {
			assertBytes(t, msg, pt, name)
		} else {
			assert.True(t, untouched(dst), "%s: a failed Open wrote to dst", name)
		}
	default:
		t.Fatalf("%s: unknown result %q", name, result)
	}
}

// aeadVector is one AEAD case of the RFC 8439 and XChaCha files.
type aeadVector struct {
	ID         string       `json:"id"`
	Source     string       `json:"source"`
	Key        testutil.Hex `json:"key"`
	Nonce      testutil.Hex `json:"nonce"`
	AAD        testutil.Hex `json:"aad"`
	Plaintext  testutil.Hex `json:"plaintext"`
	Ciphertext testutil.Hex `json:"ciphertext"`
	Tag        testutil.Hex `json:"tag"`
	OneTimeKey testutil.Hex `json:"one_time_key"`
}

// keyGenVector is one Poly1305 key generation case of RFC 8439 (2.6.2, A.4).
type keyGenVector struct {
	ID         string       `json:"id"`
	Key        testutil.Hex `json:"key"`
	Nonce      testutil.Hex `json:"nonce"`
	OneTimeKey testutil.Hex `json:"one_time_key"`
}

// TestRFC8439 checks the AEAD examples of RFC 8439 (2.8.2 and A.5) and the
// one-time key generation examples (2.6.2 and A.4) on every kernel.
func TestRFC8439(t *testing.T) {
	var f struct {
		Algorithm           string          `json:"algorithm"`
		Source              json.RawMessage `json:"source"`
		Notes               string          `json:"notes"`
		QuarterRound        json.RawMessage `json:"quarter_round"`
		QuarterRoundOnState json.RawMessage `json:"quarter_round_on_state"`
		Block               json.RawMessage `json:"chacha20_block"`
		Encrypt             json.RawMessage `json:"chacha20_encrypt"`
		Poly1305            json.RawMessage `json:"poly1305"`
		KeyGen              []keyGenVector  `json:"poly1305_key_gen"`
		AEAD                []aeadVector    `json:"aead_chacha20_poly1305"`
	}
	testutil.LoadVectors(t, "rfc8439.json", &f)
	require.Len(t, f.AEAD, 2)
	require.NotEmpty(t, f.KeyGen)
	forEachKernel(t, ChaCha20Poly1305, func(t *testing.T) {
		for _, v := range f.AEAD {
			checkAEADVector(t, ChaCha20Poly1305, v)
		}
		for _, v := range f.KeyGen {
			assert.Equal(t, []byte(v.OneTimeKey), oneTimeKey(t, ChaCha20Poly1305, v.Key, v.Nonce), v.ID)
		}
	})
}

// TestXChaChaVectors checks the XChaCha20-Poly1305 example of
// draft-irtf-cfrg-xchacha on every kernel.
func TestXChaChaVectors(t *testing.T) {
	var f struct {
		Algorithm string          `json:"algorithm"`
		Sources   json.RawMessage `json:"sources"`
		Notes     string          `json:"notes"`
		HChaCha20 json.RawMessage `json:"hchacha20"`
		XChaCha20 json.RawMessage `json:"xchacha20"`
		AEAD      []aeadVector    `json:"aead_xchacha20_poly1305"`
	}
	testutil.LoadVectors(t, "xchacha.json", &f)
	require.NotEmpty(t, f.AEAD)
	forEachKernel(t, XChaCha20Poly1305, func(t *testing.T) {
		for _, v := range f.AEAD {
			checkAEADVector(t, XChaCha20Poly1305, v)
		}
	})
}

// checkAEADVector seals and opens one known-answer case, checks the
// one-time Poly1305 key when the case gives it, and checks that a flipped
// tag bit is rejected.
func checkAEADVector(t *testing.T, suite Suite, v aeadVector) {
	t.Helper()
	a := mustNew(t, suite, v.Key)
	box := concat(v.Ciphertext, v.Tag)
	assert.Equal(t, box, a.Seal(nil, v.Nonce, v.Plaintext, v.AAD), v.ID)
	pt, err := a.Open(nil, v.Nonce, box, v.AAD)
	require.NoError(t, err, v.ID)
	assertBytes(t, v.Plaintext, pt, v.ID)
	if len(v.OneTimeKey) > 0 {
		assert.Equal(t, []byte(v.OneTimeKey), oneTimeKey(t, suite, v.Key, v.Nonce), v.ID)
	}
	box[len(box)-1] ^= 1
	_, err = a.Open(nil, v.Nonce, box, v.AAD)
	assert.ErrorIs(t, err, ErrOpen, v.ID)
}

// oneTimeKey returns the Poly1305 key a ChaCha suite derives for key and
// nonce: the first 32 bytes of keystream block 0.
func oneTimeKey(t *testing.T, suite Suite, key, nonce []byte) []byte {
	t.Helper()
	a, ok := mustNew(t, suite, key).(*chachaAEAD)
	require.True(t, ok)
	var s [16]uint32
	var head [headSize]byte
	a.init(&s, nonce)
	a.startHead(&s, head[:], 0)
	return head[:32]
}

// TestSecretboxVectors checks all secretbox cases (NaCl, x/crypto and
// TweetNaCl.js vectors): Seal gives tag || ciphertext (the box), Open gives
// the message back and refuses the box with its tag or ciphertext altered,
// leaving dst untouched.
func TestSecretboxVectors(t *testing.T) {
	var f struct {
		Algorithm string          `json:"algorithm"`
		Sources   json.RawMessage `json:"sources"`
		Notes     string          `json:"notes"`
		Cases     []struct {
			ID         string       `json:"id"`
			Source     string       `json:"source"`
			Key        testutil.Hex `json:"key"`
			Nonce      testutil.Hex `json:"nonce"`
			Plaintext  testutil.Hex `json:"plaintext"`
			Ciphertext testutil.Hex `json:"ciphertext"`
			Tag        testutil.Hex `json:"tag"`
			Box        testutil.Hex `json:"box"`
		} `json:"cases"`
	}
	testutil.LoadVectors(t, "secretbox.json", &f)
	require.Len(t, f.Cases, 770)
	forEachKernel(t, XSalsa20Poly1305, func(t *testing.T) {
		for _, v := range f.Cases {
			b := mustSecretbox(t, XSalsa20Poly1305, v.Key)
			require.Len(t, v.Nonce, NonceSizeX, v.ID)
			nonce := (*[NonceSizeX]byte)(v.Nonce)
			box := concat(v.Tag, v.Ciphertext)
			if len(v.Box) > 0 {
				require.Equal(t, []byte(v.Box), box, "%s: box is tag || ciphertext", v.ID)
			}
			assert.Equal(t, box, b.Seal(nil, nonce, v.Plaintext), v.ID)
			pt, err := b.Open(nil, nonce, box)
			require.NoError(t, err, v.ID)
			assertBytes(t, v.Plaintext, pt, v.ID)

			box[0] ^= 0x80 // tag
			_, err = b.Open(nil, nonce, box)
			assert.ErrorIs(t, err, ErrOpen, v.ID)
			box[0] ^= 0x80
			box[len(box)-1] ^= 1 // last ciphertext byte, or the tag if empty
			dst := sentinel(len(box))
			_, err = b.Open(dst, nonce, box)
			assert.ErrorIs(t, err, ErrOpen, v.ID)
			assert.True(t, untouched(dst), v.ID)
		}
	})
}

var _ cipher.AEAD = (*chachaAEAD)(nil)
