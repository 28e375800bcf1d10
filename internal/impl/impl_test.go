package impl

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegistryPicksBestSupported(t *testing.T) {
	r := New("test")
	assert.Equal(t, "generic", r.Name())
	r.Register(1, "ssse3", true)
	r.Register(2, "avx2", true)
	r.Register(3, "avx512", false)
	assert.Equal(t, ID(2), r.Active())
	assert.Equal(t, "avx2", r.Name())
	assert.Equal(t, []string{"avx2", "ssse3", "generic"}, r.Names())
}

func TestRegistryUse(t *testing.T) {
	r := New("test")
	r.Register(1, "ssse3", true)
	r.Register(2, "avx512", false)

	restore, err := r.Use("generic")
	require.NoError(t, err)
	assert.Equal(t, Generic, r.Active())
	restore()
	assert.Equal(t, "ssse3", r.Name())

	_, err = r.Use("avx512")
	assert.ErrorContains(t, err, "not supported")
	_, err = r.Use("neon")
	assert.ErrorContains(t, err, "no kernel named")
	assert.Equal(t, "ssse3", r.Name(), "a refused Use changes nothing")
}

func TestRegisterOutOfOrderPanics(t *testing.T) {
	r := New("test")
	assert.Panics(t, func() { r.Register(2, "avx2", true) })
}
