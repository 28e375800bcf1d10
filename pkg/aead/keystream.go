package aead

import (
	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/salsacore"
)

// chunkSize is how much Seal encrypts before it MACs: one chunk is still
// in cache when the MAC reads it, so a large message streams through
// memory once. (Open MACs the whole message before it decrypts any of it,
// in chunks of this size too.) 32 KiB measured a few
// percent faster at 64 KiB than 16 KiB (each IFMA Poly1305 call first
// computes powers of r) and no slower than 64 KiB. It is a multiple of the
// block size.
const chunkSize = 32 * 1024

// headBlocks is the size in blocks of the largest stack buffer Seal and
// Open fill in their first kernel call: block 0 (the Poly1305 key) and the
// keystream of a message that fits after it come from one call, which a
// SIMD kernel computes in parallel. Longer messages get block 0 alone and
// run straight through the XOR-fused kernel.
const headBlocks = 16

// headSize is the stack buffer for that first call: block 0 (the Poly1305
// key, and for secretbox the first 32 keystream bytes of the message) and
// the keystream of the message's next bytes.
const headSize = headBlocks * blockSize

// blockSize is the block size of both ciphers.
const blockSize = chachacore.BlockSize

// Compile-time check that the two block sizes agree.
var _ [0]struct{} = [salsacore.BlockSize - chachacore.BlockSize]struct{}{}

// roundUpBlocks rounds n up to whole blocks.
func roundUpBlocks(n int) int { return (n + blockSize - 1) &^ (blockSize - 1) }
