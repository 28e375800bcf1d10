package sealed_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/hkdf"
	"golang.org/x/crypto/nacl/secretbox"
	"golang.org/x/text/unicode/norm"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/refcrypto"
)

// This file is a second implementation of docs/FILE.md, written from the
// document with independent primitives only: the standard library's
// SHA-256 and HMAC, x/crypto's HKDF, Argon2id, ChaCha20-Poly1305,
// XChaCha20-Poly1305 and secretbox, and internal/testutil/refcrypto for the
// reduced-round suites x/crypto lacks. It never calls pkg/spipe/sealed,
// pkg/spipe or pkg/aead to compute an expected byte. With -update-vectors
// it writes testdata/file-v1; without, it checks that every byte of those
// files follows from their inputs (vectors_test.go checks the package
// against them).

var updateVectors = flag.Bool("update-vectors", false, "rewrite testdata/file-v1 from this file's independent derivation")

// vectorDir is where the vectors live, from this package's directory.
const vectorDir = "../../../testdata/file-v1"

// specSuite is a suite as section 4.2 of the document describes it.
type specSuite struct {
	id        byte
	name      string
	secretbox bool // tag || ciphertext
	nonceSize int
	rounds    int
}

var specSuites = []specSuite{
	{1, "chacha20-poly1305", false, 12, 20},
	{2, "xchacha20-poly1305", false, 24, 20},
	{3, "xsalsa20-poly1305", true, 24, 20},
	{4, "chacha12-poly1305", false, 12, 12},
	{5, "chacha8-poly1305", false, 12, 8},
	{6, "xsalsa12-poly1305", true, 24, 12},
}

// specSeal seals pt under key and nonce as suite s does (section 4.2).
func specSeal(s specSuite, key, nonce, pt []byte) []byte {
	k := (*[32]byte)(key)
	switch {
	case s.secretbox && s.rounds == 20:
		return secretbox.Seal(nil, pt, (*[24]byte)(nonce), k)
	case s.secretbox:
		return refcrypto.SealSecretbox(k, (*[24]byte)(nonce), s.rounds, pt)
	case s.rounds == 20:
		newAEAD := chacha20poly1305.New
		if s.nonceSize == 24 {
			newAEAD = chacha20poly1305.NewX
		}
		a, err := newAEAD(key)
		if err != nil {
			panic(err)
		}
		return a.Seal(nil, nonce, pt, nil)
	}
	return refcrypto.SealRFC8439(k, nonce, s.rounds, pt, nil)
}

// The vector file layout (testdata/file-v1/README.md).
type (
	argon2Vector struct {
		Time      uint32 `json:"time"`
		MemoryKiB uint32 `json:"memory_kib"`
		Threads   uint8  `json:"threads"`
	}
	chunkVector struct {
		Index       uint64       `json:"index"`
		Final       bool         `json:"final"`
		Nonce       testutil.Hex `json:"nonce"`
		PlainOffset int          `json:"plaintext_offset"`
		PlainLength int          `json:"plaintext_length"`
		FileOffset  int          `json:"file_offset"`
		SealedLen   int          `json:"sealed_length"`
	}
	fileVector struct {
		Name       string       `json:"name"`
		Suite      string       `json:"suite"`
		SuiteID    int          `json:"suite_id"`
		ChunkSize  int          `json:"chunk_size"`
		KeyFile    testutil.Hex `json:"key_file,omitempty"`
		Passphrase string       `json:"passphrase,omitempty"`
		// PassphraseNFC is the passphrase's NFC form (section 1.2), given
		// where it differs from Passphrase.
		PassphraseNFC string        `json:"passphrase_nfc,omitempty"`
		Argon2        *argon2Vector `json:"argon2,omitempty"`
		Salt          testutil.Hex  `json:"salt"`
		Plaintext     testutil.Hex  `json:"plaintext"`

		IKM      testutil.Hex  `json:"ikm"`
		PRK      testutil.Hex  `json:"prk"`
		KHeader  testutil.Hex  `json:"k_header"`
		KPayload testutil.Hex  `json:"k_payload"`
		Header   testutil.Hex  `json:"header"`
		Chunks   []chunkVector `json:"chunks"`
		File     testutil.Hex  `json:"file"`
	}
	vectorFile struct {
		Description string       `json:"description"`
		Files       []fileVector `json:"files"`
	}
)

// The inputs the vectors share.
var (
	specKeyFile      = []byte("9a6f3c21d4e5b68a7c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d\n")
	specOtherKeyFile = []byte("0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0\n")
	specPassphrase   = "correct horse battery staple"
	// A passphrase as an input method may enter it: U+212B ANGSTROM SIGN
	// (a singleton NFC replaces), and o and e followed by combining
	// marks; and its NFC form, written out code point by code point.
	specPassphraseNFD = "\u212bngstro\u0308m cafe\u0301"
	specPassphraseNFC = "\u00c5ngstr\u00f6m caf\u00e9"
	// The cheapest Argon2id the limits allow, so the vectors check fast.
	specArgon2     = argon2Vector{Time: 1, MemoryKiB: 8192, Threads: 1}
	specChunkSize  = 1024
	specPlainSizes = []struct {
		name string
		size int
	}{{"empty", 0}, {"one-byte", 1}, {"one-chunk", 1024}, {"two-chunks", 2048}, {"two-and-a-half-chunks", 2560}}
)

// specBytes is n bytes named by label: SHA-256(label || LE32(block))
// blocks, so nothing hidden goes into the vectors.
func specBytes(label string, n int) []byte {
	out := make([]byte, 0, n+32)
	for i := uint32(0); len(out) < n; i++ {
		var ctr [4]byte
		binary.LittleEndian.PutUint32(ctr[:], i)
		sum := sha256.Sum256(append([]byte(label), ctr[:]...))
		out = append(out, sum[:]...)
	}
	return out[:n]
}

func hkdfExpand(prk []byte, info []byte) []byte {
	out := make([]byte, 32)
	if _, err := hkdf.Expand(sha256.New, prk, info).Read(out); err != nil {
		panic(err)
	}
	return out
}

// specInputs are what a file is made from.
type specInputs struct {
	name       string
	suite      specSuite
	chunkSize  int
	keyFile    []byte // or
	passphrase string
	// passphraseNFC is passphrase in Unicode Normalization Form C, written
	// out by hand where it differs (section 1.2); Argon2id takes it.
	passphraseNFC string
	argon2        *argon2Vector
	salt          []byte
	plaintext     []byte
}

// specFile makes the file of in, as sections 1 to 4 of the document say,
// with every intermediate value.
func specFile(in specInputs) fileVector {
	v := fileVector{Name: in.name, Suite: in.suite.name, SuiteID: int(in.suite.id), ChunkSize: in.chunkSize,
		KeyFile: in.keyFile, Passphrase: in.passphrase, PassphraseNFC: in.passphraseNFC, Argon2: in.argon2,
		Salt: in.salt, Plaintext: in.plaintext}
	// Section 2: the header's fields.
	h := make([]byte, 96)
	copy(h, "\x89spipe\r\n")
	h[8] = 1
	h[9] = in.suite.id
	binary.BigEndian.PutUint32(h[12:], uint32(in.chunkSize))
	copy(h[24:56], in.salt)
	// Section 1: the IKM.
	if in.argon2 == nil {
		h[10] = 1
		sum := sha256.Sum256(in.keyFile)
		v.IKM = sum[:]
	} else {
		h[10] = 2
		h[11] = in.argon2.Threads
		binary.BigEndian.PutUint32(h[16:], in.argon2.Time)
		binary.BigEndian.PutUint32(h[20:], in.argon2.MemoryKiB)
		pass := in.passphrase
		if in.passphraseNFC != "" {
			pass = in.passphraseNFC
		}
		v.IKM = argon2.IDKey([]byte(pass), in.salt, in.argon2.Time, in.argon2.MemoryKiB, in.argon2.Threads, 32)
	}
	// Section 3: the keys.
	v.PRK = hkdf.Extract(sha256.New, v.IKM, in.salt)
	v.KHeader = hkdfExpand(v.PRK, []byte("spipe file/1 header"))
	v.KPayload = hkdfExpand(v.PRK, append([]byte("spipe file/1 payload"), h[:56]...))
	m := hmac.New(sha256.New, v.KHeader)
	m.Write(h[:56])
	copy(h[56:88], m.Sum(nil))
	sum := sha256.Sum256(h[:88])
	copy(h[88:96], sum[:8])
	v.Header = h
	// Section 4: the chunks.
	n := 1
	if len(in.plaintext) > 0 {
		n = (len(in.plaintext) + in.chunkSize - 1) / in.chunkSize
	}
	file := append([]byte{}, h...)
	for i := range n {
		lo := i * in.chunkSize
		hi := min(lo+in.chunkSize, len(in.plaintext))
		nonce := make([]byte, in.suite.nonceSize)
		binary.LittleEndian.PutUint64(nonce, uint64(i))
		if i == n-1 {
			nonce[8] = 1
		}
		sealed := specSeal(in.suite, v.KPayload, nonce, in.plaintext[lo:hi])
		v.Chunks = append(v.Chunks, chunkVector{Index: uint64(i), Final: i == n-1, Nonce: nonce,
			PlainOffset: lo, PlainLength: hi - lo, FileOffset: len(file), SealedLen: len(sealed)})
		file = append(file, sealed...)
	}
	v.File = file
	return v
}

// specValidFiles are every published valid file, by vector file name.
func specValidFiles() map[string]vectorFile {
	out := map[string]vectorFile{}
	for _, s := range specSuites {
		f := vectorFile{Description: "spipe files (docs/FILE.md, version 1) sealed with " + s.name +
			" under a key file, in 1 KiB chunks: an empty plaintext, one byte, exactly one and two chunks, and two and a half chunks"}
		for _, p := range specPlainSizes {
			name := s.name + "/" + p.name
			f.Files = append(f.Files, specFile(specInputs{name: name, suite: s, chunkSize: specChunkSize,
				keyFile: specKeyFile, salt: specBytes("salt "+name, 32), plaintext: specBytes("plaintext "+name, p.size)}))
		}
		out[s.name] = f
	}
	pf := vectorFile{Description: "spipe files (docs/FILE.md, version 1) sealed under a passphrase (Argon2id t=1, m=8192 KiB, p=1, the cheapest the limits allow, and t=2, p=2), with the default suite and with xsalsa20-poly1305, and one whose passphrase was entered in decomposed form (passphrase_nfc: what Argon2id takes)"}
	for _, c := range []struct {
		name      string
		suite     specSuite
		size      int
		a         argon2Vector
		pass, nfc string
	}{
		{"passphrase/empty", specSuites[0], 0, specArgon2, specPassphrase, ""},
		{"passphrase/two-and-a-half-chunks", specSuites[0], 2560, specArgon2, specPassphrase, ""},
		{"passphrase/two-lanes", specSuites[0], 1500, argon2Vector{Time: 2, MemoryKiB: 8192, Threads: 2}, specPassphrase, ""},
		{"passphrase/xsalsa20", specSuites[2], 2048, specArgon2, specPassphrase, ""},
		{"passphrase/decomposed", specSuites[0], 1500, specArgon2, specPassphraseNFD, specPassphraseNFC},
	} {
		a := c.a
		pf.Files = append(pf.Files, specFile(specInputs{name: c.name, suite: c.suite, chunkSize: specChunkSize,
			passphrase: c.pass, passphraseNFC: c.nfc, argon2: &a, salt: specBytes("salt "+c.name, 32),
			plaintext: specBytes("plaintext "+c.name, c.size)}))
	}
	out["passphrase"] = pf
	return out
}

func vectorFilePath(name string) string { return filepath.Join(vectorDir, name+".json") }

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
}

func loadJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

// TestWriteVectors rewrites testdata/file-v1 with -update-vectors.
func TestWriteVectors(t *testing.T) {
	if !*updateVectors {
		t.Skip("rewrites testdata/file-v1 only with -update-vectors")
	}
	for name, f := range specValidFiles() {
		writeJSON(t, vectorFilePath(name), f)
	}
	writeJSON(t, vectorFilePath("invalid"), specInvalidFiles())
}

// TestVectorsFollowFromTheirInputs derives every published file again
// from its recorded inputs and requires every recorded value to match.
func TestVectorsFollowFromTheirInputs(t *testing.T) {
	for name, want := range specValidFiles() {
		var got vectorFile
		loadJSON(t, vectorFilePath(name), &got)
		assert.Equal(t, want, got, name)
	}
	var got invalidFile
	loadJSON(t, vectorFilePath("invalid"), &got)
	assert.Equal(t, specInvalidFiles(), got)
}

// TestSpecSelfCheck holds this derivation to what the document promises,
// independently of the vectors: sizes follow section 4.3, and a chunk
// sealed here opens only under its own index and finality.
func TestSpecSelfCheck(t *testing.T) {
	for _, f := range specValidFiles() {
		for _, v := range f.Files {
			n := int64(len(v.Chunks))
			assert.Equal(t, int64(96+len(v.Plaintext))+16*n, int64(len(v.File)), v.Name)
			assert.True(t, bytes.Equal(v.Header, v.File[:96]), v.Name)
		}
	}
	// Nonce layout: a chunk's index and finality change its bytes.
	in := specInputs{name: "x", suite: specSuites[0], chunkSize: 1024, keyFile: specKeyFile,
		salt: make([]byte, 32), plaintext: make([]byte, 1024)}
	one := specFile(in)
	in.plaintext = make([]byte, 2048)
	two := specFile(in)
	assert.NotEqual(t, one.File[96:96+1040], two.File[96:96+1040], "chunk 0 final vs not")
	assert.Equal(t, fmt.Sprintf("%x", one.Header[:56]), fmt.Sprintf("%x", two.Header[:56]))
	// The NFC form written out by hand is what x/text's NFC makes, and
	// differs from the form entered.
	assert.Equal(t, specPassphraseNFC, norm.NFC.String(specPassphraseNFD))
	assert.NotEqual(t, specPassphraseNFC, specPassphraseNFD)
}
