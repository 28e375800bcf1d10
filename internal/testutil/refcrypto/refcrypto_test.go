package refcrypto

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/nacl/secretbox"
	//lint:ignore SA1019 the low-level package is x/crypto's only Salsa20 core and HSalsa20; test-only.
	"golang.org/x/crypto/salsa20/salsa"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// stream returns the case's key stream bytes, [c.Start(),
// c.Start()+len(c.Keystream)), from a block function of the block number.
func stream(c testutil.KeystreamCase, block func(ctr uint64) [64]byte) []byte {
	skip := c.Start() % 64
	var out []byte
	for b := c.Start() / 64; uint64(len(out)) < skip+uint64(len(c.Keystream)); b++ {
		blk := block(b)
		out = append(out, blk[:]...)
	}
	return out[skip : skip+uint64(len(c.Keystream))]
}

// TestChaChaMatchesVectors holds the reference ChaCha to the external
// ChaCha8/12/20 vectors (128- and 256-bit keys), in both counter layouts.
func TestChaChaMatchesVectors(t *testing.T) {
	var strom struct {
		testutil.Header
		Cases []testutil.KeystreamCase `json:"cases"`
	}
	testutil.LoadVectors(t, "chacha_strombergson.json", &strom)
	var djb struct {
		testutil.Header
		DJB  []testutil.KeystreamCase `json:"djb_cases"`
		IETF []testutil.KeystreamCase `json:"ietf_cases"`
	}
	testutil.LoadVectors(t, "chacha_djb_extra.json", &djb)
	rounds := map[int]int{}
	for _, c := range append(strom.Cases, djb.DJB...) {
		got := stream(c, func(ctr uint64) [64]byte {
			var tail [16]byte
			binary.LittleEndian.PutUint64(tail[:], ctr)
			copy(tail[8:], c.Nonce)
			return ChaChaBlock(c.Key, &tail, c.Rounds)
		})
		assert.Equal(t, []byte(c.Keystream), got, c.ID)
		rounds[c.Rounds]++
	}
	for _, c := range djb.IETF {
		got := stream(c, func(ctr uint64) [64]byte {
			var tail [16]byte
			binary.LittleEndian.PutUint32(tail[:], uint32(ctr))
			copy(tail[4:], c.Nonce)
			return ChaChaBlock(c.Key, &tail, c.Rounds)
		})
		assert.Equal(t, []byte(c.Keystream), got, c.ID)
	}
	for _, r := range []int{8, 12, 20} {
		assert.GreaterOrEqual(t, rounds[r], 20, "ChaCha%d cases checked", r)
	}
}

// TestSalsaMatchesVectors holds the reference Salsa20 to the external
// Salsa20/8 and /12 vectors (128- and 256-bit keys) and the 20-round core to
// x/crypto's.
func TestSalsaMatchesVectors(t *testing.T) {
	var v testutil.SalsaStreams
	testutil.LoadVectors(t, "salsa20_reduced.json", &v)
	rounds := map[int]int{}
	for _, c := range v.Keystream {
		got := stream(c, func(ctr uint64) [64]byte {
			var in [16]byte
			copy(in[:8], c.Nonce)
			binary.LittleEndian.PutUint64(in[8:], ctr)
			return SalsaBlock(c.Key, &in, c.Rounds)
		})
		assert.Equal(t, []byte(c.Keystream), got, c.ID)
		rounds[c.Rounds]++
	}
	for _, c := range v.SHA256 {
		require.Len(t, c.Key, 32, c.ID)
		h := sha256.New()
		for b := c.Counter; b < c.Counter+uint64(c.Length)/64; b++ {
			var in [16]byte
			copy(in[:8], c.Nonce)
			binary.LittleEndian.PutUint64(in[8:], b)
			blk := SalsaBlock(c.Key, &in, c.Rounds)
			h.Write(blk[:])
		}
		assert.Equal(t, []byte(c.KeystreamSHA256), h.Sum(nil), c.ID)
		rounds[c.Rounds]++
	}
	for _, c := range v.Core {
		var x, in [16]uint32
		for i := range in {
			in[i] = le(c.Input[4*i:])
		}
		x = in
		salsaRounds(&x, c.Rounds)
		for i := range x {
			assert.Equal(t, le(c.Output[4*i:]), x[i]+in[i], "%s word %d", c.ID, i)
		}
		rounds[c.Rounds]++
	}
	assert.GreaterOrEqual(t, rounds[12], 3, "Salsa20/12 cases checked")
	assert.GreaterOrEqual(t, rounds[8], 8, "Salsa20/8 cases checked")

	r := testutil.Rand(t)
	for range 20 {
		key, in := [32]byte(testutil.Bytes(r, 32)), [16]byte(testutil.Bytes(r, 16))
		var want [64]byte
		var ks [32]byte
		copy(ks[:], key[:])
		salsa.XORKeyStream(want[:], want[:], &in, &ks)
		assert.Equal(t, want, SalsaBlock(key[:], &in, 20))
	}
}

// TestTwentyRoundsMatchXCrypto: at full strength every construction here
// equals x/crypto's, byte for byte, and opens what x/crypto sealed.
func TestTwentyRoundsMatchXCrypto(t *testing.T) {
	r := testutil.Rand(t)
	for _, n := range []int{0, 1, 15, 16, 17, 63, 64, 65, 200, 1000} {
		key := [32]byte(testutil.Bytes(r, 32))
		msg, ad := testutil.Bytes(r, n), testutil.Bytes(r, n%23)

		for _, nonceSize := range []int{12, 24} {
			nonce := testutil.Bytes(r, nonceSize)
			newAEAD := chacha20poly1305.New
			if nonceSize == 24 {
				newAEAD = chacha20poly1305.NewX
			}
			a, err := newAEAD(key[:])
			require.NoError(t, err)
			want := a.Seal(nil, nonce, msg, ad)
			assert.Equal(t, want, SealRFC8439(&key, nonce, 20, msg, ad), "nonce %d, %d bytes", nonceSize, n)
			pt, err := OpenRFC8439(&key, nonce, 20, want, ad)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(msg, pt))
			bad := append([]byte(nil), want...)
			bad[len(bad)-1] ^= 1
			_, err = OpenRFC8439(&key, nonce, 20, bad, ad)
			assert.Error(t, err)
		}

		nonce := [24]byte(testutil.Bytes(r, 24))
		want := secretbox.Seal(nil, msg, &nonce, &key)
		assert.Equal(t, want, SealSecretbox(&key, &nonce, 20, msg), "secretbox, %d bytes", n)
		pt, err := OpenSecretbox(&key, &nonce, 20, want)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(msg, pt))
		want[0] ^= 1
		_, err = OpenSecretbox(&key, &nonce, 20, want)
		assert.Error(t, err)

		in := [16]byte(testutil.Bytes(r, 16))
		hc, err := chacha20.HChaCha20(key[:], in[:])
		require.NoError(t, err)
		got := HChaCha(&key, &in, 20)
		assert.Equal(t, hc, got[:])
		var hs [32]byte
		salsa.HSalsa20(&hs, &in, &key, &salsa.Sigma)
		assert.Equal(t, hs, HSalsa(&key, &in, 20))
	}
}
