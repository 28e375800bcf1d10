package aead

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// everyLength is how far TestEveryLength goes: past every short-message
// kernel and stack buffer, and the first kernel calls of long messages.
const everyLength = 2048

// TestEveryLength seals every message length up to 2 KiB with every
// suite on every kernel (forEachKernel, the short-message kernels
// included), at random alignments of message, additional data and output,
// and holds it to the generic code (the cores' generic kernels, no
// short-message kernels), which TestChaChaMatchesXCrypto and
// TestSecretboxMatchesXCrypto hold to x/crypto; then opens it, in place
// too, and checks that a flipped tag bit opens nothing.
func TestEveryLength(t *testing.T) {
	for _, suite := range Suites() {
		t.Run(suite.String(), func(t *testing.T) {
			r := testutil.Rand(t)
			key := testutil.Bytes(r, KeySize)
			type tc struct{ nonce, msg, ad, want []byte }
			cases := make([]tc, everyLength+1)
			for n := range cases {
				c := tc{msg: testutil.Bytes(r, n)}
				c.nonce = testutil.Bytes(r, suite.NonceSize())
				if !suite.Secretbox() {
					c.ad = testutil.Bytes(r, r.IntN(40))
				}
				cases[n] = c
			}
			generic(t, suite, func() {
				a := mustAny(t, suite, key)
				for n := range cases {
					cases[n].want = a.Seal(nil, cases[n].nonce, cases[n].msg, cases[n].ad)
				}
			})
			forEachKernel(t, suite, func(t *testing.T) {
				a := mustAny(t, suite, key)
				for n, c := range cases {
					msg := shifted(c.msg, r.IntN(64))
					ad := shifted(c.ad, r.IntN(64))
					out := a.Seal(make([]byte, r.IntN(64), 2*n+200)[:0], c.nonce, msg, ad)
					if !bytes.Equal(c.want, out) {
						require.Equal(t, c.want, out, "Seal of %d bytes", n)
					}
					pt, err := a.Open(nil, c.nonce, shifted(c.want, r.IntN(64)), ad)
					require.NoError(t, err, "Open of %d bytes", n)
					assertBytes(t, c.msg, pt, "Open of %d bytes", n)
					// in place: the output's layout decides where
					// the message goes (AEAD: the ciphertext's
					// place; secretbox: after the tag)
					box := bytes.Clone(c.want)
					ctAt, _ := layout(suite, n)
					pt, err = a.Open(box[ctAt:ctAt], c.nonce, box, ad)
					require.NoError(t, err)
					assertBytes(t, c.msg, pt, "Open in place of %d bytes", n)
					bad := bytes.Clone(c.want)
					_, tagAt := layout(suite, n)
					bad[tagAt] ^= 1
					dst := sentinel(n + 64)
					_, err = a.Open(dst, c.nonce, bad, ad)
					require.ErrorIs(t, err, ErrOpen)
					require.True(t, untouched(dst), "a failed Open of %d bytes wrote to dst", n)
				}
			})
		})
	}
}

// shifted returns a copy of b that starts off bytes into its buffer.
func shifted(b []byte, off int) []byte {
	buf := make([]byte, off+len(b))
	copy(buf[off:], b)
	return buf[off:]
}

// generic runs f on the generic code of suite's cipher family, with the
// short-message kernels off.
func generic(t *testing.T, suite Suite, f func()) {
	t.Helper()
	restore, err := kernelSwitch(suite).Use("generic")
	require.NoError(t, err)
	defer restore()
	f()
}
