// Package arx emits the add-rotate-xor building blocks shared by spipe's
// ChaCha and Salsa20 generators, for each vector instruction set the kernels
// target, and the frame every keystream kernel is built in: its signature
// and arguments ([LoadArgs]), the counter update and return
// ([Args.Finish]), the XOR of key stream into a block ([Args.XorBlock]), a
// stack [Frame] and the constant tables. [Generate] ends every generator.
//
// Every helper writes instructions into the current avo function (the
// package-level context of github.com/mmcloughlin/avo/build) and works on
// vectors of 32-bit lanes. An [ISA] value picks the encoding: legacy SSE
// two-operand forms for SSSE3, VEX three-operand forms for AVX2, and EVEX
// forms (VPROLD, broadcast memory operands) for AVX-512, either on ZMM or,
// with AVX-512VL, on XMM and YMM.
//
// The helpers never allocate registers behind the caller's back except where
// a doc comment says so: register budgets are the generator's business,
// because avo does not spill (see KERNEL-NOTES.md).
package arx
