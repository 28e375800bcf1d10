package aeadcore

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/poly1305"
	"github.com/spipe-dev/spipe/internal/salsacore"
	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/spipe-dev/spipe/internal/testutil/kerneltest"
)

// sw switches between this package's kernels for kerneltest.ForEach.
var sw = kerneltest.Switch{Kernels: Kernels, Use: UseKernel, Active: Kernel}

// withKernels runs f once per kernel that handles messages (not
// "generic", which hands every message back).
func withKernels(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	kerneltest.ForEach(t, sw, func(t *testing.T) {
		if Kernel() == "generic" {
			t.Skip("the generic path hands every message back (TestGenericHandlesNothing)")
		}
		f(t)
	})
}

// takesChaCha restates which ChaCha-Poly1305 message lengths the active
// kernel tier takes (dispatch_amd64.go): avx512 up to 256 bytes,
// avx512ifma every length up to MaxChaCha; the tests hold dispatch to it,
// so a length quietly handed back fails as much as a wrong ciphertext.
func takesChaCha(n int) bool {
	switch Kernel() {
	case "avx512":
		return n <= 256
	case "avx512ifma":
		return n <= MaxChaCha
	}
	return false
}

// takesSecretbox restates which secretbox message lengths the active
// kernel tier takes (dispatch_amd64.go): avx512 up to 480 bytes,
// avx512ifma up to MaxSecretbox.
func takesSecretbox(n int) bool {
	switch Kernel() {
	case "avx512":
		return n <= 480
	case "avx512ifma":
		return n <= MaxSecretbox
	}
	return false
}

// reference computes both constructions the long way, on the cores'
// generic code: the key stream block by block, Poly1305 over the MAC
// input built by hand. It is what the kernels are held to at every round
// count (x/crypto has 20 rounds only).
type reference struct{ rounds int }

// generic runs f with the cores' generic code switched on.
func generic(t *testing.T, f func()) {
	t.Helper()
	r1, err := chachacore.UseKernel("generic")
	require.NoError(t, err)
	defer r1()
	r2, err := salsacore.UseKernel("generic")
	require.NoError(t, err)
	defer r2()
	r3, err := poly1305.UseKernel("generic")
	require.NoError(t, err)
	defer r3()
	f()
}

// chacha returns RFC 8439's ciphertext and tag of pt and ad under state s
// (counter 0).
func (ref reference) chacha(t *testing.T, s [16]uint32, pt, ad []byte) (ct []byte, tag [16]byte) {
	generic(t, func() {
		var key [64]byte
		chachacore.XORKeyStream(&s, ref.rounds, key[:], key[:])
		ct = make([]byte, len(pt))
		chachacore.XORKeyStream(&s, ref.rounds, ct, pt)
		poly1305.SumAEAD(&tag, (*[32]byte)(key[:32]), ad, ct)
	})
	return ct, tag
}

// secretbox returns secretbox's ciphertext and tag of pt under the
// Salsa20 state s (counter 0): the key stream's first 32 bytes are the
// Poly1305 key, the message's start at byte 32.
func (ref reference) secretbox(t *testing.T, s [16]uint32, pt []byte) (ct []byte, tag [16]byte) {
	generic(t, func() {
		ks := make([]byte, 32+len(pt))
		salsacore.XORKeyStream(&s, ref.rounds, ks, ks)
		ct = make([]byte, len(pt))
		for i := range pt {
			ct[i] = pt[i] ^ ks[32+i]
		}
		poly1305.Sum(&tag, ct, (*[32]byte)(ks[:32]))
	})
	return ct, tag
}

// chachaState and salsaState are random states with the counter at 0.
func chachaState(r *rand.Rand) [16]uint32 {
	var s chachacore.State
	chachacore.Init(&s, testutil.Bytes(r, 32), testutil.Bytes(r, 12))
	return s
}

func salsaState(r *rand.Rand) [16]uint32 {
	var s salsacore.State
	salsacore.Init(&s, testutil.Bytes(r, 32), testutil.Bytes(r, 8))
	return s
}

// at returns n bytes of a fresh buffer starting off bytes in, so that
// kernels meet every alignment.
func at(r *rand.Rand, n, off int) []byte {
	b := testutil.Bytes(r, n+off+64)
	return b[off : off+n : off+n]
}
