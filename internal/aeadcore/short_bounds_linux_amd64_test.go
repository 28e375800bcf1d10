//go:build gc && !purego

package aeadcore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// TestShortIFMAStayInBounds is TestStayInBounds for the short IFMA
// kernels on every length they take, not only those dispatch gives them.
func TestShortIFMAStayInBounds(t *testing.T) {
	if !hasIFMA {
		t.Skip("the CPU lacks AVX-512 IFMA or VBMI2")
	}
	r := testutil.Rand(t)
	for _, k := range shortIFMA {
		t.Run(k.name, func(t *testing.T) {
			for n := 1; n <= k.max; n++ {
				src := kerneltest.BeforeGuardPage(t, n)
				copy(src, testutil.Bytes(r, n))
				dst := kerneltest.BeforeGuardPage(t, n)
				ad := kerneltest.BeforeGuardPage(t, n%23)
				s := chachaState(r)
				want, wantTag := reference{20}.chacha(t, s, src, ad)
				var tag [16]byte
				k.seal(&s, 20, dst, src, ad, &tag)
				require.Equal(t, want, dst, "seal n %d", n)
				require.Equal(t, wantTag, tag, "tag n %d", n)
				assert.True(t, k.open(&s, 20, src, dst, ad, &tag), "open n %d", n)
			}
		})
	}
}
