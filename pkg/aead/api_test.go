package aead

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

func TestConstructorsRejectBadKeys(t *testing.T) {
	ctors := map[string]func([]byte) (any, error){
		"NewChaCha20Poly1305":  func(k []byte) (any, error) { return NewChaCha20Poly1305(k) },
		"NewXChaCha20Poly1305": func(k []byte) (any, error) { return NewXChaCha20Poly1305(k) },
	}
	for _, s := range Suites() {
		ctors[s.String()] = func(k []byte) (any, error) {
			if s.Secretbox() {
				return NewSecretbox(s, k)
			}
			return New(s, k)
		}
	}
	for name, ctor := range ctors {
		for _, n := range []int{0, 16, 31, 33, 64} {
			a, err := ctor(make([]byte, n))
			assert.ErrorContains(t, err, "key size", "%s key %d", name, n)
			assert.Nil(t, a, "%s key %d", name, n)
		}
	}
}

// TestConstructorsRefuseOtherSuites checks that New refuses the secretbox
// suites (naming NewSecretbox), NewSecretbox the AEAD suites (naming New),
// and both any invalid suite.
func TestConstructorsRefuseOtherSuites(t *testing.T) {
	key := make([]byte, KeySize)
	for _, s := range secretboxSuites() {
		a, err := New(s, key)
		assert.ErrorContains(t, err, "NewSecretbox", s.String())
		assert.Nil(t, a)
	}
	for _, s := range aeadSuites() {
		b, err := NewSecretbox(s, key)
		assert.ErrorContains(t, err, "use New", s.String())
		assert.Nil(t, b)
	}
	for _, s := range []Suite{0, 7, 255} {
		a, err := New(s, key)
		assert.ErrorContains(t, err, "unknown suite", "suite %d", s)
		assert.Nil(t, a)
		b, err := NewSecretbox(s, key)
		assert.ErrorContains(t, err, "unknown suite", "suite %d", s)
		assert.Nil(t, b)
	}
}

func TestNamedConstructorsMatchSuites(t *testing.T) {
	r := testutil.Rand(t)
	key := testutil.Bytes(r, KeySize)
	for _, tc := range []struct {
		suite Suite
		ctor  func([]byte) (cipher.AEAD, error)
	}{
		{ChaCha20Poly1305, NewChaCha20Poly1305},
		{XChaCha20Poly1305, NewXChaCha20Poly1305},
	} {
		a, err := tc.ctor(key)
		require.NoError(t, err)
		b := mustNew(t, tc.suite, key)
		assert.Equal(t, tc.suite.NonceSize(), a.NonceSize())
		n := testutil.Bytes(r, a.NonceSize())
		assert.Equal(t, b.Seal(nil, n, []byte("msg"), []byte("ad")), a.Seal(nil, n, []byte("msg"), []byte("ad")))
	}
}

func TestSuiteProperties(t *testing.T) {
	want := map[Suite]struct {
		name      string
		nonce     int
		reduced   bool
		secretbox bool
	}{
		ChaCha20Poly1305:  {"chacha20-poly1305", 12, false, false},
		XChaCha20Poly1305: {"xchacha20-poly1305", 24, false, false},
		XSalsa20Poly1305:  {"xsalsa20-poly1305", 24, false, true},
		ChaCha12Poly1305:  {"chacha12-poly1305", 12, true, false},
		ChaCha8Poly1305:   {"chacha8-poly1305", 12, true, false},
		XSalsa12Poly1305:  {"xsalsa12-poly1305", 24, true, true},
	}
	// The wire identifiers of protocol 2: these numbers never change.
	assert.Equal(t, []Suite{1, 2, 3, 4, 5, 6}, []Suite{ChaCha20Poly1305, XChaCha20Poly1305,
		XSalsa20Poly1305, ChaCha12Poly1305, ChaCha8Poly1305, XSalsa12Poly1305})
	require.Len(t, Suites(), len(want))
	for i, s := range Suites() {
		w, ok := want[s]
		require.True(t, ok, "suite %d", s)
		assert.Equal(t, w.name, s.String())
		assert.Equal(t, w.nonce, s.NonceSize(), s.String())
		assert.Equal(t, w.reduced, s.Reduced(), s.String())
		assert.Equal(t, w.secretbox, s.Secretbox(), s.String())
		assert.True(t, s.Valid())
		if i > 0 && !s.Reduced() {
			assert.False(t, Suites()[i-1].Reduced(), "full-strength suites come first")
		}
		if s.Secretbox() {
			mustSecretbox(t, s, make([]byte, KeySize))
		} else {
			assert.Equal(t, w.nonce, mustNew(t, s, make([]byte, KeySize)).NonceSize())
		}
	}
	for _, s := range []Suite{0, 7, 200} {
		assert.False(t, s.Valid())
		assert.False(t, s.Reduced())
		assert.False(t, s.Secretbox())
		assert.Zero(t, s.NonceSize())
		assert.Equal(t, fmt.Sprintf("Suite(%d)", s), s.String())
	}
}

// TestSuitesIsAFreshSlice checks that a caller changing the returned
// slice changes nobody else's.
func TestSuitesIsAFreshSlice(t *testing.T) {
	s := Suites()
	s[0] = 0
	assert.Equal(t, ChaCha20Poly1305, Suites()[0])
}

func TestParseSuite(t *testing.T) {
	for _, s := range Suites() {
		for _, name := range []string{s.String(), strings.ToUpper(s.String()), " " + s.String() + "\t"} {
			got, err := ParseSuite(name)
			require.NoError(t, err, name)
			assert.Equal(t, s, got, name)
		}
	}
	for name, want := range map[string]Suite{
		"chacha20": ChaCha20Poly1305, "ChaCha20-Poly1305": ChaCha20Poly1305,
		"xchacha20": XChaCha20Poly1305, "XChaCha20-Poly1305": XChaCha20Poly1305,
		"xsalsa20": XSalsa20Poly1305, "salsa20": XSalsa20Poly1305, "salsa20-poly1305": XSalsa20Poly1305,
		"secretbox": XSalsa20Poly1305,
		"chacha12":  ChaCha12Poly1305, "chacha8": ChaCha8Poly1305,
		"xsalsa12": XSalsa12Poly1305, "salsa12": XSalsa12Poly1305, "salsa2012": XSalsa12Poly1305,
	} {
		got, err := ParseSuite(name)
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}
	for _, name := range []string{"", "aes-gcm", "chacha20-poly", "chacha20poly1305", "Suite(1)", "1"} {
		s, err := ParseSuite(name)
		assert.Zero(t, s, name)
		if assert.Error(t, err, name) {
			for _, valid := range Suites() {
				assert.Contains(t, err.Error(), valid.String(), "the error lists every name")
			}
			assert.Contains(t, err.Error(), "chacha8", "and the aliases")
			assert.Contains(t, err.Error(), strconv.Quote(name))
		}
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
