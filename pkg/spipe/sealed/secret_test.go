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
