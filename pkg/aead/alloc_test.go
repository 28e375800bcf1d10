package aead

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoAllocs checks that Seal and Open of every suite allocate nothing
// when dst has room, for a short and a multi-chunk message.
func TestNoAllocs(t *testing.T) {
	key := make([]byte, KeySize)
	for _, suite := range Suites() {
		a, err := New(suite, key)
		require.NoError(t, err)
		for _, n := range []int{0, 64, 3*chunkSize + 5} {
			t.Run(fmt.Sprintf("%s/%d", suite, n), func(t *testing.T) {
				nonce := make([]byte, a.NonceSize())
				msg := make([]byte, n)
				box := a.Seal(nil, nonce, msg, nil)
				sealDst := make([]byte, 0, n+TagSize)
				openDst := make([]byte, 0, n)
				assert.Zero(t, testing.AllocsPerRun(20, func() {
					a.Seal(sealDst, nonce, msg, nil)
				}), "Seal")
				assert.Zero(t, testing.AllocsPerRun(20, func() {
					if _, err := a.Open(openDst, nonce, box, nil); err != nil {
						panic(err)
					}
				}), "Open")
			})
		}
	}
}
