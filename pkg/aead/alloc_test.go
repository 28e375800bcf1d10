package aead

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoAllocs checks that Seal and Open of every suite allocate nothing
// when dst has room, out of place and in place, for a short, a 1 KiB and
// a multi-chunk message, and that a failed Open allocates nothing either.
func TestNoAllocs(t *testing.T) {
	key := make([]byte, KeySize)
	for _, suite := range Suites() {
		a := mustAny(t, suite, key)
		ctAt, _ := layout(suite, 0)
		for _, n := range []int{0, 64, 1024, 1500, 3*chunkSize + 5} {
			t.Run(fmt.Sprintf("%s/%d", suite, n), func(t *testing.T) {
				nonce := make([]byte, a.NonceSize())
				msg := make([]byte, n)
				box := a.Seal(nil, nonce, msg, nil)
				bad := append([]byte(nil), box...)
				bad[len(bad)-1] ^= 1
				sealDst := make([]byte, 0, n+TagSize)
				openDst := make([]byte, 0, n)
				buf := make([]byte, n+TagSize)
				assert.Zero(t, testing.AllocsPerRun(20, func() {
					a.Seal(sealDst, nonce, msg, nil)
				}), "Seal")
				assert.Zero(t, testing.AllocsPerRun(20, func() {
					_, err := a.Open(openDst, nonce, box, nil)
					require.NoError(t, err)
				}), "Open")
				assert.Zero(t, testing.AllocsPerRun(20, func() {
					a.Seal(buf[:0], nonce, buf[ctAt:ctAt+n], nil)
					_, err := a.Open(buf[ctAt:ctAt], nonce, buf, nil)
					require.NoError(t, err)
				}), "in place")
				assert.Zero(t, testing.AllocsPerRun(20, func() {
					_, err := a.Open(openDst, nonce, bad, nil)
					require.ErrorIs(t, err, ErrOpen)
				}), "failed Open")
			})
		}
	}
}
