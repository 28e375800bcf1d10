package sealed_test

import (
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe"
	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// TestSecretNeverPrints: no fmt verb shows a key's PSK or a passphrase,
// by pointer or by value.
func TestSecretNeverPrints(t *testing.T) {
	material := []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n")
	k, err := spipe.NewKey(material)
	require.NoError(t, err)
	ks := sealed.Key(k)
	ps, err := sealed.Passphrase([]byte("hunter2 and more"))
	require.NoError(t, err)
	for _, v := range []any{ks, *ks, ps, *ps} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, "hunter2", verb)
			assert.NotContains(t, out, "0123456789abcdef", verb)
			assert.NotContains(t, out, hex.EncodeToString([]byte("hunter2")), verb)
		}
	}
	assert.Equal(t, "sealed.Key("+k.Fingerprint()+")", ks.String())
	assert.Equal(t, "sealed.Passphrase", ps.String())
	_, err = sealed.Passphrase(nil)
	assert.Error(t, err)
}

// TestPassphraseNormalization: a passphrase that is UTF-8 is the same
// secret in any canonically equivalent form (NFC, docs/FILE.md 1.2), but
// not in a compatibility form; bytes that are not UTF-8 are used as they
// are, so a precomposed form of them is another secret.
func TestPassphraseNormalization(t *testing.T) {
	open := func(sealedWith, openedWith string) error {
		s, err := sealed.Passphrase([]byte(sealedWith))
		require.NoError(t, err)
		o, err := sealed.Passphrase([]byte(openedWith))
		require.NoError(t, err)
		params := sealed.Argon2Params{Time: 1, MemoryKiB: sealed.MinArgon2MemoryKiB, Threads: 1}
		file := seal(t, s, []byte("x"), &sealed.Options{Argon2: &params})
		_, err = openAll(t, o, file, 1)
		return err
	}
	assert.NoError(t, open("cafe\u0301", "caf\u00e9"), "NFD sealed, NFC opens")
	assert.NoError(t, open("caf\u00e9", "cafe\u0301"), "NFC sealed, NFD opens")
	assert.NoError(t, open("\u212b", "\u00c5"), "a singleton: ANGSTROM SIGN is A WITH RING")
	assert.ErrorIs(t, open("\ufb01", "fi"), sealed.ErrWrongKey, "the ligature is kept (NFC, not NFKC)")
	assert.ErrorIs(t, open("\xffcafe\u0301", "\xffcaf\u00e9"), sealed.ErrWrongKey, "not UTF-8: the bytes as they are")
	assert.NoError(t, open("\xffcafe\u0301", "\xffcafe\u0301"))
}
