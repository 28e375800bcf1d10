package aead

import (
	"github.com/spipe-dev/spipe/internal/chachacore"
	"github.com/spipe-dev/spipe/internal/salsacore"
)

// chunkSize is how much Seal encrypts before it MACs: the ciphertext of one
// chunk is still in L1 when Poly1305 reads it, so large messages are
// streamed through memory once. It is a multiple of the block size and at
// most the kernels' MaxCallBytes.
const chunkSize = 16 * 1024

// chachaXOR XORs ChaCha keystream from the block counter in s[12] into dst,
// for any length of src, and advances s[12]. A final partial block's unused
// keystream is discarded (every caller ends its message there). The caller
// keeps len(src) within the 32-bit counter and at most chunkSize.
func chachaXOR(s *chachacore.State, rounds int, dst, src []byte) {
	full := len(src) &^ (chachacore.BlockSize - 1)
	if full > 0 {
		chachacore.XORKeyStreamBlocks(s, rounds, dst[:full], src[:full])
	}
	if tail := src[full:]; len(tail) > 0 {
		var block [chachacore.BlockSize]byte
		copy(block[:], tail)
		chachacore.XORKeyStreamBlocks(s, rounds, block[:], block[:])
		copy(dst[full:], block[:len(tail)])
	}
}

// salsaXOR is chachaXOR for Salsa20, whose 64-bit block counter lives in
// s[8] (low) and s[9] (high): it splits the work where s[8] wraps and
// carries into s[9], because the core advances s[8] only. len(src) is at
// most chunkSize.
func salsaXOR(s *salsacore.State, rounds int, dst, src []byte) {
	full := len(src) &^ (salsacore.BlockSize - 1)
	for full > 0 {
		n := full
		if left := (1<<32 - uint64(s[8])) * salsacore.BlockSize; uint64(n) > left {
			n = int(left)
		}
		salsacore.XORKeyStreamBlocks(s, rounds, dst[:n], src[:n])
		if s[8] == 0 {
			s[9]++
		}
		dst, src, full = dst[n:], src[n:], full-n
	}
	if len(src) > 0 {
		var block [salsacore.BlockSize]byte
		copy(block[:], src)
		salsacore.XORKeyStreamBlocks(s, rounds, block[:], block[:])
		if s[8] == 0 {
			s[9]++
		}
		copy(dst, block[:len(src)])
	}
}
