//go:build gc && !purego

package aeadcore

import (
	"golang.org/x/sys/cpu"

	"github.com/spipe-dev/spipe/internal/impl"
)

// The kernel tiers. avx512's gate covers the "Requires:" lines of the
// chachaPolyAVX512 and secretboxAVX512 kernels in aead_amd64.s: AVX-512 F,
// VL and BW (byte masks), BMI2 (BZHI, MULX, SHLX); x/sys/cpu reports
// AVX-512 only when the OS saves its registers. avx512ifma has those
// kernels and the chachaPolyIFMA and secretboxIFMA ones, whose Poly1305
// runs in vector lanes (AVX-512 IFMA, and VBMI2 for VPSHRDQ).
const (
	avx512Kernel impl.ID = impl.Generic + 1 + iota
	ifmaKernel
)

var (
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW &&
		cpu.X86.HasBMI2 && cpu.X86.HasAVX && cpu.X86.HasAVX2
	hasIFMA = hasAVX512 && cpu.X86.HasAVX512IFMA && cpu.X86.HasAVX512VBMI2
)

func init() {
	kernels.Register(avx512Kernel, "avx512", hasAVX512)
	kernels.Register(ifmaKernel, "avx512ifma", hasIFMA)
}

// handlesChaCha reports whether the kernel tier k takes a ChaCha-Poly1305
// message of n bytes: avx512 up to 256, avx512ifma every length up to
// MaxChaCha. Past 256 bytes the avx512 tier has no kernel (Poly1305 in
// general registers costs 16 cycles a block, the IFMA lanes' chain the
// same at any length): pkg/aead's own path takes those messages (see
// docs/KERNELS.md).
func handlesChaCha(k impl.ID, n int) bool {
	switch {
	case k == impl.Generic:
		return false
	case n <= 256:
		return true
	default:
		return k == ifmaKernel
	}
}

// sealChaCha picks the kernel by length (each takes any length up to its
// limit). Direct calls, not function values, so that the caller's state
// and buffers stay on its stack (see package impl). The IFMA kernels take
// over where their lanes' Poly1305 beats general registers: from 193
// bytes (a ZMM row set's 4 blocks, Poly1305 over up to 16 ciphertext
// blocks in one group of lanes), from 257 with two row sets, from 513
// with the 16-block group.
func sealChaCha(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte) bool {
	k := kernels.Active()
	if !handlesChaCha(k, len(src)) {
		return false
	}
	switch n := len(src); {
	case n <= 64:
		chachaPolyAVX512x1Seal(s, rounds, dst, src, ad, tag)
	case n <= 192:
		chachaPolyAVX512x3Seal(s, rounds, dst, src, ad, tag)
	case n <= 256 && k != ifmaKernel:
		chachaPolyAVX512x4Seal(s, rounds, dst, src, ad, tag)
	case n <= 256:
		chachaPolyIFMAx4Seal(s, rounds, dst, src, ad, tag)
	case n <= 512:
		chachaPolyIFMAx8Seal(s, rounds, dst, src, ad, tag)
	default:
		chachaPolyIFMAx16Seal(s, rounds, dst, src, ad, tag)
	}
	return true
}

func openChaCha(s *[16]uint32, rounds int, dst, src, ad []byte, tag *[16]byte) (ok, handled bool) {
	k := kernels.Active()
	if !handlesChaCha(k, len(src)) {
		return false, false
	}
	switch n := len(src); {
	case n <= 64:
		return chachaPolyAVX512x1Open(s, rounds, dst, src, ad, tag), true
	case n <= 192:
		return chachaPolyAVX512x3Open(s, rounds, dst, src, ad, tag), true
	case n <= 256 && k != ifmaKernel:
		return chachaPolyAVX512x4Open(s, rounds, dst, src, ad, tag), true
	case n <= 256:
		return chachaPolyIFMAx4Open(s, rounds, dst, src, ad, tag), true
	case n <= 512:
		return chachaPolyIFMAx8Open(s, rounds, dst, src, ad, tag), true
	default:
		return chachaPolyIFMAx16Open(s, rounds, dst, src, ad, tag), true
	}
}

// handlesSecretbox reports whether the kernel tier k takes a secretbox
// message of n bytes: avx512 up to 480, avx512ifma up to MaxSecretbox.
// From 481 bytes on the 16-block kernel (block 0 beside a 16-block group,
// Poly1305 in vector lanes) takes them; below, the 7-block one measured
// faster (see docs/KERNELS.md).
func handlesSecretbox(k impl.ID, n int) bool {
	switch {
	case k == impl.Generic:
		return false
	case n <= 480:
		return true
	default:
		return k == ifmaKernel
	}
}

func sealSecretbox(s *[16]uint32, rounds int, dst, src []byte, tag *[16]byte) bool {
	if !handlesSecretbox(kernels.Active(), len(src)) {
		return false
	}
	switch n := len(src); {
	case n <= 96:
		secretboxAVX512x1Seal(s, rounds, dst, src, tag)
	case n <= 224:
		secretboxAVX512x3Seal(s, rounds, dst, src, tag)
	case n <= 288:
		secretboxAVX512x4Seal(s, rounds, dst, src, tag)
	case n <= 480:
		secretboxAVX512x7Seal(s, rounds, dst, src, tag)
	default:
		secretboxIFMAx16Seal(s, rounds, dst, src, tag)
	}
	return true
}

func openSecretbox(s *[16]uint32, rounds int, dst, src []byte, tag *[16]byte) (ok, handled bool) {
	if !handlesSecretbox(kernels.Active(), len(src)) {
		return false, false
	}
	switch n := len(src); {
	case n <= 96:
		return secretboxAVX512x1Open(s, rounds, dst, src, tag), true
	case n <= 224:
		return secretboxAVX512x3Open(s, rounds, dst, src, tag), true
	case n <= 288:
		return secretboxAVX512x4Open(s, rounds, dst, src, tag), true
	case n <= 480:
		return secretboxAVX512x7Open(s, rounds, dst, src, tag), true
	default:
		return secretboxIFMAx16Open(s, rounds, dst, src, tag), true
	}
}
