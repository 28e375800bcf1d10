package aead

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

func TestConstructorsRejectBadKeys(t *testing.T) {
	ctors := map[string]func([]byte) (interface{ NonceSize() int }, error){
		"ChaCha20":  func(k []byte) (interface{ NonceSize() int }, error) { return NewChaCha20Poly1305(k) },
		"XChaCha20": func(k []byte) (interface{ NonceSize() int }, error) { return NewXChaCha20Poly1305(k) },
		"XSalsa20":  func(k []byte) (interface{ NonceSize() int }, error) { return NewXSalsa20Poly1305(k) },
	}
	for name, ctor := range ctors {
		for _, n := range []int{0, 16, 31, 33, 64} {
			a, err := ctor(make([]byte, n))
			assert.Error(t, err, "%s key %d", name, n)
			assert.Nil(t, a, "%s key %d", name, n)
		}
	}
	for _, s := range Suites() {
		_, err := New(s, make([]byte, 16))
		assert.Error(t, err, s.String())
	}
	for _, s := range []Suite{0, 7, 255} {
		a, err := New(s, make([]byte, KeySize))
		assert.Error(t, err, "suite %d", s)
		assert.Nil(t, a)
	}
}

func TestNamedConstructorsMatchSuites(t *testing.T) {
	key := testutil.Bytes(testutil.Rand(t), KeySize)
	nonce := make([]byte, NonceSizeX)
	for _, tc := range []struct {
		suite Suite
		ctor  func([]byte) (cipherAEAD, error)
	}{
		{ChaCha20Poly1305, func(k []byte) (cipherAEAD, error) { return NewChaCha20Poly1305(k) }},
		{XChaCha20Poly1305, func(k []byte) (cipherAEAD, error) { return NewXChaCha20Poly1305(k) }},
		{XSalsa20Poly1305, func(k []byte) (cipherAEAD, error) { return NewXSalsa20Poly1305(k) }},
	} {
		a, err := tc.ctor(key)
		require.NoError(t, err)
		b := mustNew(t, tc.suite, key)
		assert.Equal(t, tc.suite.NonceSize(), a.NonceSize())
		assert.Equal(t, tc.suite.Overhead(), a.Overhead())
		n := nonce[:a.NonceSize()]
		assert.Equal(t, b.Seal(nil, n, []byte("msg"), nil), a.Seal(nil, n, []byte("msg"), nil))
	}
}

type cipherAEAD = interface {
	NonceSize() int
	Overhead() int
	Seal(dst, nonce, plaintext, additionalData []byte) []byte
}

func TestSuiteProperties(t *testing.T) {
	want := map[Suite]struct {
		name    string
		nonce   int
		reduced bool
	}{
		ChaCha20Poly1305:  {"ChaCha20-Poly1305", 12, false},
		XChaCha20Poly1305: {"XChaCha20-Poly1305", 24, false},
		XSalsa20Poly1305:  {"XSalsa20-Poly1305", 24, false},
		ChaCha12Poly1305:  {"ChaCha12-Poly1305", 12, true},
		ChaCha8Poly1305:   {"ChaCha8-Poly1305", 12, true},
		XSalsa12Poly1305:  {"XSalsa20/12-Poly1305", 24, true},
	}
	require.Len(t, Suites(), len(want))
	for _, s := range Suites() {
		w, ok := want[s]
		require.True(t, ok, "suite %d", s)
		assert.Equal(t, w.name, s.String())
		assert.Equal(t, w.nonce, s.NonceSize(), s.String())
		assert.Equal(t, w.reduced, s.Reduced(), s.String())
		assert.Equal(t, 32, s.KeySize(), s.String())
		assert.Equal(t, 16, s.Overhead(), s.String())
		assert.True(t, s.Valid())
		assert.Equal(t, w.nonce, mustNew(t, s, make([]byte, 32)).NonceSize())
	}
	for _, s := range []Suite{0, 7, 200} {
		assert.False(t, s.Valid())
		assert.False(t, s.Reduced())
		assert.Zero(t, s.KeySize())
		assert.Zero(t, s.NonceSize())
		assert.Zero(t, s.Overhead())
		assert.Contains(t, s.String(), "Suite(")
	}
}

func TestSealPanicsOnMisuse(t *testing.T) {
	key := make([]byte, KeySize)
	for _, s := range Suites() {
		a := mustNew(t, s, key)
		for _, n := range []int{0, 8, 11, 13, 16, 23, 25} {
			if n == a.NonceSize() {
				continue
			}
			assert.Panics(t, func() { a.Seal(nil, make([]byte, n), []byte("x"), nil) }, "%s nonce %d", s, n)
		}
		nonce := make([]byte, a.NonceSize())
		buf := make([]byte, 200)
		assert.Panics(t, func() { a.Seal(buf[:0], nonce, buf[5:100], nil) }, "%s inexact overlap", s)
		if isSecretbox(s) {
			assert.Panics(t, func() { a.Seal(nil, nonce, []byte("x"), []byte("ad")) }, s.String())
			assert.Panics(t, func() { a.Seal(buf[:0], nonce, buf[:100], nil) }, "%s box shifted by the tag", s)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	key := make([]byte, KeySize)
	for _, s := range Suites() {
		a := mustNew(t, s, key)
		nonce := make([]byte, a.NonceSize())
		box := a.Seal(nil, nonce, []byte("hello"), nil)
		for _, n := range []int{0, 8, 12, 24, 32} {
			if n == a.NonceSize() {
				continue
			}
			_, err := a.Open(nil, make([]byte, n), box, nil)
			assert.ErrorIs(t, err, ErrNonceSize, "%s nonce %d", s, n)
		}
		for n := range TagSize {
			_, err := a.Open(nil, nonce, box[:n], nil)
			assert.ErrorIs(t, err, ErrOpen, "%s %d-byte box", s, n)
		}
		if isSecretbox(s) {
			_, err := a.Open(nil, nonce, box, []byte{0})
			assert.ErrorIs(t, err, ErrAdditionalData, s.String())
		} else {
			_, err := a.Open(nil, nonce, box, []byte{0})
			assert.ErrorIs(t, err, ErrOpen, s.String())
		}
		_, err := a.Open(nil, nonce, box, nil)
		assert.NoError(t, err, s.String())
	}
}

// TestInPlace seals and opens in the documented in-place layouts and checks
// the result against out-of-place operation.
func TestInPlace(t *testing.T) {
	r := testutil.Rand(t)
	key := testutil.Bytes(r, KeySize)
	for _, s := range Suites() {
		a := mustNew(t, s, key)
		for _, n := range []int{0, 1, 33, 100, headSize - 64, headSize - 63, headSize - 1, headSize, headSize + 1, 1535, 1536, 2048, chunkSize + 7} {
			nonce := testutil.Bytes(r, a.NonceSize())
			msg := testutil.Bytes(r, n)
			want := a.Seal(nil, nonce, msg, nil)
			buf := make([]byte, n+TagSize)
			if isSecretbox(s) {
				copy(buf[TagSize:], msg)
				assert.Equal(t, want, a.Seal(buf[:0], nonce, buf[TagSize:], nil), "%s %d", s, n)
				pt, err := a.Open(buf[TagSize:TagSize], nonce, buf, nil)
				require.NoError(t, err)
				assertBytes(t, msg, pt)
			} else {
				copy(buf, msg)
				assert.Equal(t, want, a.Seal(buf[:0], nonce, buf[:n], nil), "%s %d", s, n)
				pt, err := a.Open(buf[:0], nonce, buf, nil)
				require.NoError(t, err)
				assertBytes(t, msg, pt)
			}
		}
	}
}

// TestFailedOpenLeavesNoPlaintext flips the tag of a message of several
// chunks and of one of 1 KiB (both of which Open decrypts before it can
// check the tag), and opens it into a separate buffer and in place:
// neither may keep a byte of plaintext, and the tag itself is left as it
// was.
func TestFailedOpenLeavesNoPlaintext(t *testing.T) {
	r := testutil.Rand(t)
	key := testutil.Bytes(r, KeySize)
	for _, s := range Suites() {
		for _, n := range []int{headSize, 3*chunkSize + 5} {
			failedOpenLeavesNoPlaintext(t, r, mustNew(t, s, key), s, n)
		}
	}
}

// failedOpenLeavesNoPlaintext is TestFailedOpenLeavesNoPlaintext for one
// suite and message length.
func failedOpenLeavesNoPlaintext(t *testing.T, r *rand.Rand, a cipher.AEAD, s Suite, n int) {
	t.Helper()
	nonce := testutil.Bytes(r, a.NonceSize())
	box := a.Seal(nil, nonce, testutil.Bytes(r, n), nil)
	ctAt, tagAt := 0, n
	if isSecretbox(s) {
		ctAt, tagAt = TagSize, 0
	}
	box[tagAt] ^= 0x10
	tag := bytes.Clone(box[tagAt : tagAt+TagSize])

	dst := sentinel(len(box))
	pt, err := a.Open(dst, nonce, box, nil)
	assert.ErrorIs(t, err, ErrOpen)
	assert.Nil(t, pt)
	assert.True(t, noPlaintext(dst, n), "%s %d", s, n)

	_, err = a.Open(box[ctAt:ctAt], nonce, box, nil)
	assert.ErrorIs(t, err, ErrOpen)
	assert.Equal(t, make([]byte, n), box[ctAt:ctAt+n], "%s %d: failed in-place Open left bytes in the buffer", s, n)
	assert.Equal(t, tag, box[tagAt:tagAt+TagSize], "%s %d: failed in-place Open changed the tag", s, n)
}

// TestOpenIntoTag opens with dst's new bytes on top of the tag (but not
// the ciphertext): Open must read the tag before it writes plaintext.
func TestOpenIntoTag(t *testing.T) {
	r := testutil.Rand(t)
	key := testutil.Bytes(r, KeySize)
	for _, s := range Suites() {
		a := mustNew(t, s, key)
		nonce := testutil.Bytes(r, a.NonceSize())
		msg := testutil.Bytes(r, 12)
		// Room for the plaintext to land on the tag: for ChaCha just after
		// the ciphertext, for secretbox at the box's start.
		buf := make([]byte, 2*TagSize+len(msg))
		boxAt, dstAt := 0, len(msg)
		if isSecretbox(s) {
			boxAt, dstAt = TagSize, TagSize-4
		}
		box := a.Seal(buf[boxAt:boxAt], nonce, msg, nil)
		pt, err := a.Open(buf[dstAt:dstAt], nonce, box, nil)
		require.NoError(t, err, s.String())
		assert.Equal(t, msg, pt, s.String())
	}
}

func TestSealAndOpenAppend(t *testing.T) {
	key := make([]byte, KeySize)
	for _, s := range Suites() {
		a := mustNew(t, s, key)
		nonce := make([]byte, a.NonceSize())
		prefix := []byte("prefix")
		box := a.Seal(bytes.Clone(prefix), nonce, []byte("message"), nil)
		require.Equal(t, prefix, box[:len(prefix)])
		assert.Equal(t, a.Seal(nil, nonce, []byte("message"), nil), box[len(prefix):])
		pt, err := a.Open(bytes.Clone(prefix), nonce, box[len(prefix):], nil)
		require.NoError(t, err)
		assert.Equal(t, "prefixmessage", string(pt))
	}
}

// TestPlaintextLimit pins the RFC 8439 limit (section 2.8: P_MAX is
// 274,877,906,880 bytes) that Seal and Open enforce.
func TestPlaintextLimit(t *testing.T) {
	assert.EqualValues(t, uint64(274_877_906_880), uint64(maxChaChaPlaintext))
}

func TestPutCounterNonce(t *testing.T) {
	for _, size := range []int{NonceSize, NonceSizeX} {
		nonce := bytes.Repeat([]byte{0xff}, size)
		PutCounterNonce(nonce, 0x0102030405060708)
		assert.Equal(t, uint64(0x0102030405060708), binary.LittleEndian.Uint64(nonce))
		assert.Equal(t, make([]byte, size-8), nonce[8:])
	}
	assert.Panics(t, func() { PutCounterNonce(make([]byte, 7), 1) })

	// Consecutive counters give distinct nonces, hence unrelated boxes.
	a := mustNew(t, ChaCha20Poly1305, make([]byte, KeySize))
	var n0, n1 [NonceSize]byte
	PutCounterNonce(n0[:], 0)
	PutCounterNonce(n1[:], 1)
	assert.NotEqual(t, a.Seal(nil, n0[:], make([]byte, 32), nil), a.Seal(nil, n1[:], make([]byte, 32), nil))
	assert.Zero(t, testing.AllocsPerRun(10, func() { PutCounterNonce(n1[:], 7) }))
}
