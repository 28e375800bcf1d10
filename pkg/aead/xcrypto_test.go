package aead

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/nacl/secretbox"
	//lint:ignore SA1019 the test references assemble the AEADs from Poly1305.
	"golang.org/x/crypto/poly1305"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/pkg/chacha20"
	"github.com/spipe-dev/spipe/pkg/salsa20"
)

// diffSizes covers empty, sub-block, block, secretbox's 32-byte boundary,
// the ends of the short-message stack buffers (8 blocks and headSize, less
// 64 for ChaCha and 32 for secretbox), the ends of the first kernel call
// that computes block 0 beside the message (16 and 17 message blocks, and
// 32, where the 32-block kernel takes over), multi-block and multi-chunk
// lengths, and secretbox's first chunk boundary (its first chunk runs to
// headSize - 32 + chunkSize).
var diffSizes = []int{0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 95, 96, 97, 127, 128, 129,
	255, 256, 257, 447, 448, 449, 479, 480, 481,
	headSize - 65, headSize - 64, headSize - 63, headSize - 33, headSize - 32,
	headSize - 31, headSize - 1, headSize, headSize + 1, 1000, 1024, 1087, 1088, 1089, 1500, 2047, 2048, 2049,
	chunkSize - 1, chunkSize, chunkSize + 1,
	chunkSize + headSize - 33, chunkSize + headSize - 32, chunkSize + headSize - 31,
	chunkSize + headSize, 2 * chunkSize, 2*chunkSize + 100, 70000}

var adSizes = []int{0, 1, 16, 17, 100}

// TestChaChaMatchesXCrypto seals random messages with ours and x/crypto's
// ChaCha20-Poly1305 and XChaCha20-Poly1305 and opens each side's output
// with the other, on every kernel.
func TestChaChaMatchesXCrypto(t *testing.T) {
	for _, tc := range []struct {
		suite Suite
		ref   func([]byte) (cipher.AEAD, error)
	}{
		{ChaCha20Poly1305, chacha20poly1305.New},
		{XChaCha20Poly1305, chacha20poly1305.NewX},
	} {
		t.Run(tc.suite.String(), func(t *testing.T) {
			forEachKernel(t, tc.suite, func(t *testing.T) {
				r := testutil.Rand(t)
				key := testutil.Bytes(r, KeySize)
				ours := mustNew(t, tc.suite, key)
				ref, err := tc.ref(key)
				require.NoError(t, err)
				require.Equal(t, ref.NonceSize(), ours.NonceSize())
				require.Equal(t, ref.Overhead(), ours.Overhead())
				for _, n := range diffSizes {
					for _, adLen := range adSizes {
						nonce := testutil.Bytes(r, ours.NonceSize())
						msg := testutil.Bytes(r, n)
						ad := testutil.Bytes(r, adLen)
						want := ref.Seal(nil, nonce, msg, ad)
						require.Equal(t, want, ours.Seal(nil, nonce, msg, ad), "Seal len %d ad %d", n, adLen)
						pt, err := ours.Open(nil, nonce, want, ad)
						require.NoError(t, err)
						assertBytes(t, msg, pt)
						pt, err = ref.Open(nil, nonce, ours.Seal(nil, nonce, msg, ad), ad)
						require.NoError(t, err)
						assertBytes(t, msg, pt)
					}
				}
			})
		})
	}
}

// TestSecretboxMatchesXCrypto checks that ours and x/crypto's nacl/secretbox
// seal identically and that a box made by either opens with the other.
func TestSecretboxMatchesXCrypto(t *testing.T) {
	forEachKernel(t, XSalsa20Poly1305, func(t *testing.T) {
		r := testutil.Rand(t)
		key := testutil.Bytes(r, KeySize)
		ours := mustSecretbox(t, XSalsa20Poly1305, key)
		for _, n := range diffSizes {
			nonce := (*[NonceSizeX]byte)(testutil.Bytes(r, NonceSizeX))
			msg := testutil.Bytes(r, n)
			want := secretbox.Seal(nil, msg, nonce, (*[32]byte)(key))
			got := ours.Seal(nil, nonce, msg)
			require.Equal(t, want, got, "len %d", n)
			pt, err := ours.Open(nil, nonce, want)
			require.NoError(t, err)
			assertBytes(t, msg, pt)
			pt, ok := secretbox.Open(nil, got, nonce, (*[32]byte)(key))
			require.True(t, ok)
			assertBytes(t, msg, pt)
		}
	})
}

// refChaChaPoly is RFC 8439 section 2.8 written out from its definition, one
// step at a time, over pkg/chacha20 (proven against external ChaCha20,
// ChaCha12 and ChaCha8 vectors) and x/crypto's Poly1305. It is the reference
// for the reduced-round suites, which x/crypto does not have; it is itself
// checked against x/crypto at 20 rounds.
func refChaChaPoly(t testing.TB, key, nonce, msg, ad []byte, rounds int) []byte {
	c, err := chacha20.NewUnauthenticatedCipherWithRounds(key, nonce, rounds)
	require.NoError(t, err)
	block0 := make([]byte, 64)
	c.XORKeyStream(block0, block0)
	ct := make([]byte, len(msg))
	c.XORKeyStream(ct, msg)
	pad := func(b []byte) []byte { return append(b, make([]byte, (16-len(b)%16)%16)...) }
	macData := pad(append([]byte(nil), ad...))
	macData = pad(append(macData, ct...))
	macData = binary.LittleEndian.AppendUint64(macData, uint64(len(ad)))
	macData = binary.LittleEndian.AppendUint64(macData, uint64(len(ct)))
	var tag [16]byte
	poly1305.Sum(&tag, macData, (*[32]byte)(block0[:32]))
	return append(ct, tag[:]...)
}

// refSecretbox is crypto_secretbox written out from its definition over
// pkg/salsa20 (proven against external XSalsa20 and Salsa20/12 vectors) and
// x/crypto's Poly1305, checked against nacl/secretbox at 20 rounds.
func refSecretbox(t testing.TB, key, nonce, msg []byte, rounds int) []byte {
	c, err := salsa20.NewUnauthenticatedCipherWithRounds(key, nonce, rounds)
	require.NoError(t, err)
	var macKey [32]byte
	c.XORKeyStream(macKey[:], macKey[:])
	ct := make([]byte, len(msg))
	c.XORKeyStream(ct, msg)
	var tag [16]byte
	poly1305.Sum(&tag, ct, &macKey)
	return append(tag[:], ct...)
}

// TestReducedRoundSuites checks every suite against the references above,
// and the references against x/crypto where it has the construction.
func TestReducedRoundSuites(t *testing.T) {
	r := testutil.Rand(t)
	key := testutil.Bytes(r, KeySize)
	refX, err := chacha20poly1305.NewX(key)
	require.NoError(t, err)
	refIETF, err := chacha20poly1305.New(key)
	require.NoError(t, err)
	for _, suite := range Suites() {
		t.Run(suite.String(), func(t *testing.T) {
			ours := mustAny(t, suite, key)
			for _, n := range diffSizes {
				nonce := testutil.Bytes(r, suite.NonceSize())
				msg := testutil.Bytes(r, n)
				var ad, want []byte
				if suite.Secretbox() {
					want = refSecretbox(t, key, nonce, msg, suite.rounds())
				} else {
					ad = testutil.Bytes(r, n%37)
					want = refChaChaPoly(t, key, nonce, msg, ad, suite.rounds())
				}
				switch suite {
				case ChaCha20Poly1305:
					require.Equal(t, refIETF.Seal(nil, nonce, msg, ad), want, "reference is RFC 8439")
				case XChaCha20Poly1305:
					require.Equal(t, refX.Seal(nil, nonce, msg, ad), want, "reference is XChaCha20-Poly1305")
				case XSalsa20Poly1305:
					require.Equal(t, secretbox.Seal(nil, msg, (*[24]byte)(nonce), (*[32]byte)(key)), want,
						"reference is secretbox")
				}
				require.Equal(t, want, ours.Seal(nil, nonce, msg, ad), fmt.Sprintf("len %d", n))
				pt, err := ours.Open(nil, nonce, want, ad)
				require.NoError(t, err)
				assertBytes(t, msg, pt)
			}
		})
	}
}
