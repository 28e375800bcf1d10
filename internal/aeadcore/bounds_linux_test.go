//go:build linux

package aeadcore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// TestStayInBounds puts the message, the output and the additional data
// each right before an unmapped page: a kernel that reads or writes one
// byte past them faults. The last, masked piece of a message is the part
// at risk; every length that ends a piece part-way is tried.
func TestStayInBounds(t *testing.T) {
	r := testutil.Rand(t)
	withKernels(t, func(t *testing.T) {
		for n := 0; n <= max(MaxChaCha, MaxSecretbox); n++ {
			src := kerneltest.BeforeGuardPage(t, n)
			copy(src, testutil.Bytes(r, n))
			dst := kerneltest.BeforeGuardPage(t, n)
			ad := kerneltest.BeforeGuardPage(t, n%23)
			var tag [16]byte
			if takesChaCha(n) {
				s := chachaState(r)
				want, wantTag := reference{20}.chacha(t, s, src, ad)
				require.True(t, SealChaCha(&s, 20, dst, src, ad, &tag))
				assertBytes(t, want, dst, "seal n %d", n)
				assert.Equal(t, wantTag, tag)
				ok, _ := OpenChaCha(&s, 20, src, dst, ad, &tag)
				assert.True(t, ok, "open n %d", n)
			}
			if !takesSecretbox(n) {
				continue
			}
			s := salsaState(r)
			want, wantTag := reference{20}.secretbox(t, s, src)
			require.True(t, SealSecretbox(&s, 20, dst, src, &tag))
			assertBytes(t, want, dst, "secretbox seal n %d", n)
			assert.Equal(t, wantTag, tag)
			ok, _ := OpenSecretbox(&s, 20, src, dst, &tag)
			assert.True(t, ok, "secretbox open n %d", n)
		}
	})
}
