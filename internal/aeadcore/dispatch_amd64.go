//go:build gc && !purego

package aeadcore

import (
	"golang.org/x/sys/cpu"

	"github.com/spipe-dev/spipe/internal/impl"
)

// avx512Kernel is the one kernel tier. Its gate covers the kernels'
// "Requires:" lines in aead_amd64.s: AVX-512 F, VL and BW (byte masks),
// BMI2 (BZHI, MULX, SHLX); x/sys/cpu reports AVX-512 only when the OS
// saves its registers.
const avx512Kernel impl.ID = impl.Generic + 1

var hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW &&
	cpu.X86.HasBMI2 && cpu.X86.HasAVX && cpu.X86.HasAVX2

func init() { kernels.Register(avx512Kernel, "avx512", hasAVX512) }

// sealChaCha picks the kernel by length (each takes any length up to its
// limit). Direct calls, not function values, so that the caller's state
// and buffers stay on its stack (see package impl).
func sealChaCha(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte) bool {
	if kernels.Active() != avx512Kernel {
		return false
	}
	switch n := len(src); {
	case n <= 64:
		chachaPolyAVX512x1Seal(s, rounds, dst, src, ad, tag)
	case n <= 192:
		chachaPolyAVX512x3Seal(s, rounds, dst, src, ad, tag)
	default:
		chachaPolyAVX512x4Seal(s, rounds, dst, src, ad, tag)
	}
	return true
}

func openChaCha(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte) (ok, handled bool) {
	if kernels.Active() != avx512Kernel {
		return false, false
	}
	switch n := len(src); {
	case n <= 64:
		return chachaPolyAVX512x1Open(s, rounds, dst, src, ad, tag), true
	case n <= 192:
		return chachaPolyAVX512x3Open(s, rounds, dst, src, ad, tag), true
	default:
		return chachaPolyAVX512x4Open(s, rounds, dst, src, ad, tag), true
	}
}

func sealSecretbox(s *[16]uint32, rounds int, dst, src []byte, tag *[16]byte) bool {
	if kernels.Active() != avx512Kernel {
		return false
	}
	switch n := len(src); {
	case n <= 96:
		secretboxAVX512x1Seal(s, rounds, dst, src, tag)
	case n <= 224:
		secretboxAVX512x3Seal(s, rounds, dst, src, tag)
	case n <= 288:
		secretboxAVX512x4Seal(s, rounds, dst, src, tag)
	default:
		secretboxAVX512x7Seal(s, rounds, dst, src, tag)
	}
	return true
}

func openSecretbox(s *[16]uint32, rounds int, dst, src []byte, tag *[16]byte) (ok, handled bool) {
	if kernels.Active() != avx512Kernel {
		return false, false
	}
	switch n := len(src); {
	case n <= 96:
		return secretboxAVX512x1Open(s, rounds, dst, src, tag), true
	case n <= 224:
		return secretboxAVX512x3Open(s, rounds, dst, src, tag), true
	case n <= 288:
		return secretboxAVX512x4Open(s, rounds, dst, src, tag), true
	default:
		return secretboxAVX512x7Open(s, rounds, dst, src, tag), true
	}
}
