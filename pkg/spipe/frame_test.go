package spipe

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/nacl/secretbox"
)

// TestSealFrameMatchesXCrypto checks the full-strength suites' frames
// against independent constructions from golang.org/x/crypto, built from
// the byte layout in docs/PROTOCOL.md: ChaCha20-Poly1305 with the header as
// additional data, secretbox with the header in the nonce.
func TestSealFrameMatchesXCrypto(t *testing.T) {
	key := randomBytes(t, 32)
	for _, size := range []int{0, 1, 63, 64, 65, 1000, 16 << 10} {
		for _, counter := range []uint64{0, 1, 255, 1 << 32, MaxFrameCounter} {
			data := randomBytes(t, size)
			header := []byte{byte(FrameData), byte(size >> 16), byte(size >> 8), byte(size)}

			fc, err := NewFrameCipher(ChaCha20Poly1305, key)
			require.NoError(t, err)
			got := fc.SealFrame(nil, counter, FrameData, data, 0)
			ref, err := chacha20poly1305.New(key)
			require.NoError(t, err)
			nonce := make([]byte, 12)
			binary.LittleEndian.PutUint64(nonce, counter)
			want := append(append([]byte(nil), header...), ref.Seal(nil, nonce, data, header)...)
			assert.Equal(t, want, got, "chacha20 size %d counter %d", size, counter)

			fc, err = NewFrameCipher(XSalsa20Poly1305, key)
			require.NoError(t, err)
			got = fc.SealFrame(nil, counter, FrameData, data, 0)
			var xnonce [24]byte
			binary.LittleEndian.PutUint64(xnonce[:], counter)
			copy(xnonce[8:], header)
			want = secretbox.Seal(append([]byte(nil), header...), data, &xnonce, (*[32]byte)(key))
			assert.Equal(t, want, got, "xsalsa20 size %d counter %d", size, counter)
		}
	}
}

func TestFrameRoundTripEverySuite(t *testing.T) {
	for _, suite := range AllSuites {
		t.Run(suite.String(), func(t *testing.T) {
			key := randomBytes(t, 32)
			seal, err := NewFrameCipher(suite, key)
			require.NoError(t, err)
			open, err := NewFrameCipher(suite, key)
			require.NoError(t, err)
			for _, pad := range []int{0, 1, 16, 100} {
				for _, size := range []int{0, 1, 97, 4096} {
					data := randomBytes(t, size)
					frame := seal.SealFrame(nil, 7, FrameData, data, pad)
					assert.Equal(t, FrameOverhead+PaddedSize(size, pad), len(frame))
					if pad > 0 {
						assert.Zero(t, (len(frame)-FrameOverhead)%pad, "padded payload is a multiple of PadTo")
					}
					n, err := FrameSize(frame)
					require.NoError(t, err)
					assert.Equal(t, len(frame), n)
					typ, got, err := open.OpenFrame(frame, 7)
					require.NoError(t, err)
					assert.Equal(t, FrameData, typ)
					assert.Equal(t, data, got)
				}
			}
		})
	}
}

// TestOpenFrameRandomAccess opens frames of a recorded stream out of order,
// each on its own, given only its counter.
func TestOpenFrameRandomAccess(t *testing.T) {
	key := randomBytes(t, 32)
	seal, err := NewFrameCipher(ChaCha20Poly1305, key)
	require.NoError(t, err)
	var stream []byte
	var offsets []int
	var datas [][]byte
	for i := range 10 {
		datas = append(datas, randomBytes(t, 10+i*37))
		offsets = append(offsets, len(stream))
		stream = seal.SealFrame(stream, uint64(i), FrameData, datas[i], 0)
	}
	open, err := NewFrameCipher(ChaCha20Poly1305, key)
	require.NoError(t, err)
	for _, i := range []int{7, 2, 9, 0, 5} {
		n, err := FrameSize(stream[offsets[i]:])
		require.NoError(t, err)
		frame := append([]byte(nil), stream[offsets[i]:offsets[i]+n]...)
		_, got, err := open.OpenFrame(frame, uint64(i))
		require.NoError(t, err)
		assert.Equal(t, datas[i], got, "frame %d", i)
		// The same frame under any other counter fails.
		frame = append([]byte(nil), stream[offsets[i]:offsets[i]+n]...)
		_, _, err = open.OpenFrame(frame, uint64(i+1))
		assert.ErrorIs(t, err, ErrTampered)
	}
}

// TestOpenFrameRejectsEveryBitFlip flips each bit of a small frame of each
// suite: every flip must fail, with no data returned.
func TestOpenFrameRejectsEveryBitFlip(t *testing.T) {
	for _, suite := range AllSuites {
		key := randomBytes(t, 32)
		fc, err := NewFrameCipher(suite, key)
		require.NoError(t, err)
		for _, pad := range []int{0, 8} {
			orig := fc.SealFrame(nil, 3, FrameData, []byte("attack at dawn"), pad)
			for bit := range len(orig) * 8 {
				frame := append([]byte(nil), orig...)
				frame[bit/8] ^= 1 << (bit % 8)
				typ, data, err := fc.OpenFrame(frame, 3)
				assert.Error(t, err, "%s bit %d", suite, bit)
				assert.Nil(t, data)
				assert.Zero(t, typ)
				if bit/8 >= 1 && bit/8 < FrameHeaderSize {
					// A flipped length: too large, too short for its header,
					// or simply unauthentic.
					assert.True(t, errorIsAny(err, ErrTampered, ErrTruncated, ErrFrameTooLarge), "%s bit %d: %v", suite, bit, err)
				} else {
					assert.ErrorIs(t, err, ErrTampered, "%s bit %d", suite, bit)
				}
			}
		}
	}
}

func errorIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

func TestOpenFrameMalformed(t *testing.T) {
	key := randomBytes(t, 32)
	fc, err := NewFrameCipher(ChaCha20Poly1305, key)
	require.NoError(t, err)

	// An authentic frame of an unknown type.
	frame := fc.SealFrame(nil, 0, FrameType(9), []byte("x"), 0)
	_, data, err := fc.OpenFrame(frame, 0)
	assert.ErrorIs(t, err, ErrMalformedFrame)
	assert.Nil(t, data)

	// An authentic padded frame whose data length exceeds the payload: seal
	// a padded frame, then re-seal its plaintext with a bad length prefix.
	body := make([]byte, 16)
	body[0], body[1], body[2] = 0, 0, 200
	frame = fc.SealFrame(nil, 1, FrameData|framePadded, body, 0)
	_, data, err = fc.OpenFrame(frame, 1)
	assert.ErrorIs(t, err, ErrMalformedFrame)
	assert.Nil(t, data)

	// A header announcing more than MaxPayloadLimit.
	_, err = FrameSize([]byte{1, 0x10, 0, 1})
	assert.ErrorIs(t, err, ErrFrameTooLarge)
	_, _, err = fc.OpenFrame([]byte{1, 0x10, 0, 1}, 0)
	assert.ErrorIs(t, err, ErrFrameTooLarge)

	// Shorter than its header announces, and a short header.
	frame = fc.SealFrame(nil, 2, FrameData, []byte("hello"), 0)
	_, _, err = fc.OpenFrame(frame[:len(frame)-1], 2)
	assert.ErrorIs(t, err, ErrTruncated)
	_, err = FrameSize(frame[:3])
	assert.ErrorIs(t, err, ErrTruncated)
	// Longer than announced.
	_, _, err = fc.OpenFrame(append(frame, 0), 2)
	assert.ErrorIs(t, err, ErrTampered)
}

func TestFrameCipherKeyAndSuiteErrors(t *testing.T) {
	_, err := NewFrameCipher(Suite(0), make([]byte, 32))
	assert.Error(t, err)
	_, err = NewFrameCipher(ChaCha20Poly1305, make([]byte, 31))
	assert.Error(t, err)
	fc, err := NewFrameCipher(ChaCha20Poly1305, make([]byte, 32))
	require.NoError(t, err)
	assert.Panics(t, func() { fc.SealFrame(nil, MaxFrameCounter+1, FrameData, nil, 0) })
	assert.Panics(t, func() { fc.SealFrame(nil, 0, FrameData, make([]byte, MaxPayloadLimit+1), 0) })
}

func TestSealFrameAllocatesNothing(t *testing.T) {
	fc, err := NewFrameCipher(ChaCha20Poly1305, make([]byte, 32))
	require.NoError(t, err)
	data := make([]byte, 16<<10)
	buf := make([]byte, 0, len(data)+FrameOverhead)
	allocs := testing.AllocsPerRun(100, func() {
		frame := fc.SealFrame(buf, 1, FrameData, data, 0)
		if _, _, err := fc.OpenFrame(frame, 1); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
}
