// Package ifma holds the Poly1305 arithmetic of the AVX-512 IFMA kernels,
// shared by the Poly1305 generator (asmgen/poly1305) and the AEAD generator
// (asmgen/aead): numbers mod 2^130 - 5 in radix 2^44 (limbs at bits 0, 44
// and 88), one number per 64-bit lane, multiplied with VPMADD52LUQ and
// VPMADD52HUQ, and the conversions between general registers in radix 2^64
// and limbs. See Mul for the bounds the limbs keep.
package ifma
