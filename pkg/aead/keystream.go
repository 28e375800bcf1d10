package aead

import (
	"crypto/subtle"

	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/salsacore"
)

// chunkSize is how much Seal encrypts before it MACs: one chunk is still
// in cache when the MAC reads it, so a large message streams through
// memory once. (Open MACs the whole message before it decrypts any of it,
// in chunks of this size too.) 32 KiB measured a few
// percent faster at 64 KiB than 16 KiB (each IFMA Poly1305 call first
// computes powers of r) and no slower than 64 KiB. It is a multiple of the
// block size and at most the kernels' MaxCallBytes.
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

// chachaXOR XORs ChaCha keystream from the block counter in s[12] into dst,
// for any length of src, and advances s[12]. A final partial block's unused
// keystream is discarded (every caller ends its message there). The caller
// keeps the message within the 32-bit counter and len(src) <= chunkSize.
//
// A partial last block does not get a kernel call of its own, which would
// cost as much as a whole row-kernel call of latency-bound rounds: it joins
// the call for the last tailJoin(n) full blocks, through a stack buffer.
func chachaXOR(s *chachacore.State, rounds int, dst, src []byte) {
	full := len(src) &^ (chachacore.BlockSize - 1)
	if full == len(src) {
		if full > 0 {
			chachacore.XORKeyStreamBlocks(s, rounds, dst, src)
		}
		return
	}
	j := tailJoin(full / chachacore.BlockSize)
	split := full - j*chachacore.BlockSize
	if split > 0 {
		chachacore.XORKeyStreamBlocks(s, rounds, dst[:split], src[:split])
	}
	// Go zeroes the buffer on every call: only as large as needed.
	if j == 0 {
		var buf [chachacore.BlockSize]byte
		xorThrough(s, rounds, buf[:], dst[split:], src[split:])
		return
	}
	var buf [16 * chachacore.BlockSize]byte
	xorThrough(s, rounds, buf[:], dst[split:], src[split:])
}

// xorThrough XORs keystream into dst from src (fewer bytes than buf holds)
// by way of buf, so that the kernel sees whole blocks.
func xorThrough(s *chachacore.State, rounds int, buf, dst, src []byte) {
	n := copy(buf, src)
	m := roundUpBlocks(n)
	chachacore.XORKeyStreamBlocks(s, rounds, buf[:m], buf[:m])
	copy(dst, buf[:n])
}

// tailJoin is how many of n full blocks before a partial last block share
// its kernel call. The AVX-512 kernels take whole multiples of 32 blocks,
// then the rest in groups of 16 at the price of 16, or up to 8, 4, 2 or 1
// at the price of that many: the last n mod 16 blocks and the partial one
// make a group that costs no more than those blocks alone (16 of them
// would start a group of their own, so then it joins none). The other
// kernels' prices rise more gently; for them it saves a call as well.
func tailJoin(n int) int { return n % 16 }

// salsaXOR is chachaXOR for Salsa20, whose 64-bit block counter lives in
// s[8] (low) and s[9] (high): it splits the work where s[8] wraps and
// carries into s[9], because the core advances s[8] only.
func salsaXOR(s *salsacore.State, rounds int, dst, src []byte) {
	full := len(src) &^ (salsacore.BlockSize - 1)
	for done := 0; done < full; {
		n := full - done
		if left := (1<<32 - uint64(s[8])) * salsacore.BlockSize; uint64(n) > left {
			n = int(left)
		}
		salsacore.XORKeyStreamBlocks(s, rounds, dst[done:done+n], src[done:done+n])
		carrySalsa(s)
		done += n
	}
	if tail := src[full:]; len(tail) > 0 {
		var ks [salsacore.BlockSize]byte
		salsacore.XORKeyStreamBlocks(s, rounds, ks[:], ks[:])
		carrySalsa(s)
		subtle.XORBytes(dst[full:], tail, ks[:])
	}
}

// carrySalsa carries a wrapped low counter word into the high one.
func carrySalsa(s *salsacore.State) {
	if s[8] == 0 {
		s[9]++
	}
}
