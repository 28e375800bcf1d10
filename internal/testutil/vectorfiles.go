package testutil

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The layouts of the vector files that more than one package reads (a
// core and its public cipher package), declared once so the packages
// cannot disagree about a field. Parts a package does not check are still
// typed, so every package's LoadVectors validates the whole file.

// Header is the description at the top of every vector file: the
// algorithm, where the cases come from (one source, or several by name)
// and notes.
type Header struct {
	Algorithm string            `json:"algorithm"`
	Source    string            `json:"source"`
	Sources   map[string]string `json:"sources"`
	Notes     string            `json:"notes"`
}

// CipherCase is a stream cipher case from block Counter: the key stream
// itself, an encryption of Plaintext to Ciphertext, or both.
type CipherCase struct {
	ID         string `json:"id"`
	Source     string `json:"source"`
	Key        Hex    `json:"key"`
	Nonce      Hex    `json:"nonce"`
	Counter    uint64 `json:"counter"`
	Plaintext  Hex    `json:"plaintext"`
	Keystream  Hex    `json:"keystream"`
	Ciphertext Hex    `json:"ciphertext"`
}

// HashCase is an HChaCha20 or HSalsa20 example: a 32-byte key and a
// 16-byte input giving a 32-byte output.
type HashCase struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	Key    Hex    `json:"key"`
	Input  Hex    `json:"input"`
	Output Hex    `json:"output"`
}

// CheckHashCases requires at least one case, and checks hash on each:
// with a 32-byte key and a 16-byte input (required of every case) it must
// return the case's output and no error.
func CheckHashCases(t *testing.T, cases []HashCase, hash func(key, input []byte) ([]byte, error)) {
	t.Helper()
	require.NotEmpty(t, cases)
	for _, c := range cases {
		require.Len(t, c.Key, 32, c.ID)
		require.Len(t, c.Input, 16, c.ID)
		got, err := hash(c.Key, c.Input)
		require.NoError(t, err, c.ID)
		assert.Equal(t, []byte(c.Output), got, c.ID)
	}
}

// KeystreamCase is a slice of key stream: bytes [Offset,
// Offset+len(Keystream)) of the stream that starts at block Counter.
type KeystreamCase struct {
	ID        string `json:"id"`
	Source    string `json:"source"`
	Rounds    int    `json:"rounds"`
	Key       Hex    `json:"key"`
	Nonce     Hex    `json:"nonce"`
	Counter   uint64 `json:"counter"`
	Offset    uint64 `json:"offset"`
	Keystream Hex    `json:"keystream"`
}

// Start is the case's first byte as an offset from the start of block 0
// (64-byte blocks).
func (c KeystreamCase) Start() uint64 { return c.Counter*64 + c.Offset }

// CrossesBlock reports whether the case's bytes run from below block b
// into it, as a case that checks a counter carry must.
func (c KeystreamCase) CrossesBlock(b uint64) bool {
	first := c.Start() / 64
	last := (c.Start() + uint64(len(c.Keystream)) - 1) / 64
	return first < b && last >= b
}

// SHA256Case is the SHA-256 of the first Length bytes of key stream from
// block Counter.
type SHA256Case struct {
	ID              string `json:"id"`
	Source          string `json:"source"`
	Rounds          int    `json:"rounds"`
	Key             Hex    `json:"key"`
	Nonce           Hex    `json:"nonce"`
	Counter         uint64 `json:"counter"`
	Length          int    `json:"length"`
	KeystreamSHA256 Hex    `json:"keystream_sha256"`
}

// WordCase is a round-function example: 4 or 16 words in, as many out.
type WordCase struct {
	ID     string `json:"id"`
	Input  []Word `json:"input"`
	Output []Word `json:"output"`
}

// RFC8439 is testdata/vectors/rfc8439.json: RFC 8439's examples.
type RFC8439 struct {
	Header
	QuarterRound        []WordCase `json:"quarter_round"`
	QuarterRoundOnState []struct {
		WordCase
		Indices []int `json:"indices"`
	} `json:"quarter_round_on_state"`
	Block       []CipherCase     `json:"chacha20_block"`
	Encrypt     []CipherCase     `json:"chacha20_encrypt"`
	Poly1305    []map[string]any `json:"poly1305"`
	Poly1305Key []map[string]any `json:"poly1305_key_gen"`
	AEAD        []map[string]any `json:"aead_chacha20_poly1305"`
}

// XChaCha is testdata/vectors/xchacha.json: HChaCha20 and XChaCha20 from
// draft-irtf-cfrg-xchacha-03 and libsodium.
type XChaCha struct {
	Header
	HChaCha20 []HashCase       `json:"hchacha20"`
	XChaCha20 []CipherCase     `json:"xchacha20"`
	AEAD      []map[string]any `json:"aead_xchacha20_poly1305"`
}

// BlockCase is a 64-byte block in, 64 bytes out.
type BlockCase struct {
	Input  Hex `json:"input"`
	Output Hex `json:"output"`
}

// SalsaSpec is testdata/vectors/salsa20_spec.json: the examples of
// Bernstein's "Salsa20 specification".
type SalsaSpec struct {
	Header
	QuarterRound []WordCase `json:"quarterround"`
	RowRound     []WordCase `json:"rowround"`
	ColumnRound  []WordCase `json:"columnround"`
	DoubleRound  []WordCase `json:"doubleround"`
	LittleEndian []struct {
		Input  Hex  `json:"input"`
		Output Word `json:"output"`
	} `json:"littleendian"`
	Core      []BlockCase `json:"salsa20_core"`
	Expansion []struct {
		Key             Hex `json:"key"`
		NonceAndCounter Hex `json:"nonce_and_counter"`
		Output          Hex `json:"output"`
	} `json:"salsa20_expansion"`
}

// SalsaStreams is testdata/vectors/salsa20_reduced.json and
// salsa20_extra.json (which has no core cases): key stream slices, SHA-256
// digests of long streams, and reduced-round cores.
type SalsaStreams struct {
	Header
	Keystream []KeystreamCase `json:"keystream_cases"`
	SHA256    []SHA256Case    `json:"sha256_cases"`
	Core      []struct {
		BlockCase
		ID     string `json:"id"`
		Source string `json:"source"`
		Rounds int    `json:"rounds"`
	} `json:"core_cases"`
}

// XSalsa20 is testdata/vectors/xsalsa20.json: HSalsa20, XSalsa20
// encryptions and a SHA-256 of a long XSalsa20 stream.
type XSalsa20 struct {
	Header
	HSalsa20 []HashCase   `json:"hsalsa20"`
	XSalsa20 []CipherCase `json:"xsalsa20"`
	SHA256   []SHA256Case `json:"sha256_cases"`
}
