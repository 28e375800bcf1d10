package poly1305

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// poly1305File is testdata/vectors/poly1305.json: libsodium, Crypto++ and
// x/crypto edge-case vectors. "invalid" cases carry a tampered key.
type poly1305File struct {
	Algorithm string            `json:"algorithm"`
	Sources   map[string]string `json:"sources"`
	Notes     string            `json:"notes"`
	Cases     []struct {
		ID      string       `json:"id"`
		Source  string       `json:"source"`
		Key     testutil.Hex `json:"key"`
		Message testutil.Hex `json:"message"`
		Tag     testutil.Hex `json:"tag"`
		Result  string       `json:"result"`
	} `json:"cases"`
}

// rfcFile is the Poly1305 part of testdata/vectors/rfc8439.json (section
// 2.5.2 and appendix A.3); the other sections are decoded loosely.
type rfcFile struct {
	Poly1305 []struct {
		ID      string       `json:"id"`
		Key     testutil.Hex `json:"key"`
		Message testutil.Hex `json:"message"`
		Tag     testutil.Hex `json:"tag"`
	} `json:"poly1305"`
}

type tagCase struct {
	id       string
	key      *[KeySize]byte
	msg, tag []byte
	valid    bool
}

func loadTagCases(t *testing.T) []tagCase {
	var pf poly1305File
	testutil.LoadVectors(t, "poly1305.json", &pf)
	var cases []tagCase
	for _, c := range pf.Cases {
		require.Len(t, c.Key, KeySize, c.ID)
		require.Len(t, c.Tag, TagSize, c.ID)
		require.Contains(t, []string{"valid", "invalid"}, c.Result, c.ID)
		cases = append(cases, tagCase{c.ID, (*[KeySize]byte)(c.Key), c.Message, c.Tag, c.Result == "valid"})
	}
	require.GreaterOrEqual(t, len(cases), 190, "poly1305.json lost cases")

	// rfc8439.json has other sections with other shapes; decode only ours.
	var rf rfcFile
	loadLoose(t, "rfc8439.json", &rf)
	require.NotEmpty(t, rf.Poly1305)
	for _, c := range rf.Poly1305 {
		require.Len(t, c.Key, KeySize, c.ID)
		require.Len(t, c.Tag, TagSize, c.ID)
		cases = append(cases, tagCase{"RFC 8439 " + c.ID, (*[KeySize]byte)(c.Key), c.Message, c.Tag, true})
	}
	return cases
}

// TestVectors checks every external vector on every kernel, through the
// one-shot Sum, Write+Sum, Verify, and byte-at-a-time writes.
func TestVectors(t *testing.T) {
	cases := loadTagCases(t)
	forEachKernel(t, func(t *testing.T) {
		for _, c := range cases {
			var got [TagSize]byte
			Sum(&got, c.msg, c.key)
			assert.Equal(t, c.valid, got == [TagSize]byte(c.tag), "%s: Sum", c.id)
			assert.Equal(t, c.valid, Verify((*[TagSize]byte)(c.tag), c.msg, c.key), "%s: Verify", c.id)

			m := New(c.key)
			m.Write(c.msg)
			assert.Equal(t, c.valid, m.Verify(c.tag), "%s: MAC.Verify", c.id)
			assert.Equal(t, got[:], m.Sum(nil), "%s: MAC.Sum after Verify", c.id)

			m = New(c.key)
			for i := range c.msg {
				m.Write(c.msg[i : i+1])
			}
			assert.Equal(t, got[:], m.Sum(nil), "%s: byte-at-a-time", c.id)

			if c.valid {
				assert.Equal(t, c.tag, got[:], "%s", c.id)
				assert.Equal(t, got, referenceSum(c.key, c.msg), "%s: reference", c.id)
			}
		}
	})
}

// loadLoose decodes a vector file of which the test uses only some
// sections (testutil.LoadVectors rejects unknown fields); the lengths
// checked above guard against a renamed field.
func loadLoose(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", name))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), name)
}
