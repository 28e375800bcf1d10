package chachacore

import "github.com/spipe-dev/spipe/internal/impl"

//go:generate go run -C ../../asmgen ./chacha -out ../internal/chachacore/chacha_amd64.s -stubs ../internal/chachacore/chacha_stubs_amd64.go -pkg chachacore

// XORKeyStream XORs len(src) bytes of key stream into dst, starting at the
// block counter in s[12], and leaves s[12] advanced by the blocks it used,
// ceil(len(src)/64), modulo 2^32: a last partial block's unused key stream
// is discarded. It writes no other word of s: this is the 32-bit counter of
// RFC 8439 (the original layout's 64-bit counter takes [XORKeyStream64]).
//
// src may have any length; dst must be at least as long (it panics
// otherwise, before writing anything) and may be src itself, but must not
// otherwise overlap it. rounds is 8, 12 or 20. Assembly cannot be
// preempted, so long inputs go to the kernels in calls of at most
// maxCallBytes.
func XORKeyStream(s *State, rounds int, dst, src []byte) {
	checkOutput(dst, src)
	if len(src) == 0 {
		return // no kernel call for an empty rest (an AEAD has them often)
	}
	// One kernel call takes the usual case: whole blocks, no more than one
	// call may take.
	if len(src)%BlockSize == 0 && len(src) <= maxCallBytes {
		if id := kernels.Active(); id != impl.Generic {
			xorBlocks(s, rounds, dst, src, id)
		} else {
			xorBlocksGeneric(s, rounds, dst, src)
		}
		return
	}
	xorSplit(s, rounds, dst, src)
}

// xorSplit is XORKeyStream in as many kernel calls as it takes.
func xorSplit(s *State, rounds int, dst, src []byte) {
	id := kernels.Active()
	// A partial last block does not get a kernel call of its own, which
	// would cost as much as a whole row-kernel call of latency-bound
	// rounds: it joins the call for the last tailJoin full blocks, through
	// a stack buffer.
	split := len(src)
	if full := len(src) &^ (BlockSize - 1); full < len(src) {
		split = full - tailJoin(full/BlockSize)*BlockSize
	}
	for done := 0; done < split; {
		n := min(split-done, maxCallBytes)
		xorBlocks(s, rounds, dst[done:done+n], src[done:done+n], id)
		done += n
	}
	switch rest := len(src) - split; {
	case rest == 0:
	case rest <= BlockSize:
		// Go zeroes the buffer on every call: only as large as needed.
		var buf [BlockSize]byte
		xorThrough(id, s, rounds, buf[:], dst[split:], src[split:])
	default:
		var buf [16 * BlockSize]byte
		xorThrough(id, s, rounds, buf[:], dst[split:], src[split:])
	}
}

// tailJoin is how many of n full blocks before a partial last block share
// its kernel call. The AVX-512 kernels take whole multiples of 32 blocks,
// then the rest in groups of 16 at the price of 16, or up to 8, 4, 2 or 1
// at the price of that many: the last n mod 16 blocks and the partial one
// make a group that costs no more than those blocks alone (16 of them
// would start a group of their own, so then it joins none). The other
// kernels' prices rise more gently; for them it saves a call as well.
func tailJoin(n int) int { return n % 16 }

// xorThrough XORs key stream into dst from src (fewer bytes than buf
// holds) by way of buf, so that the kernel sees whole blocks.
func xorThrough(id impl.ID, s *State, rounds int, buf, dst, src []byte) {
	n := copy(buf, src)
	m := (n + BlockSize - 1) &^ (BlockSize - 1)
	xorBlocks(s, rounds, buf[:m], buf[:m], id)
	copy(dst, buf[:n])
}

// XORKeyStream64 is [XORKeyStream] for the original ChaCha layout, whose
// 64-bit block counter is s[12] (low) and s[13] (high): it advances the
// counter modulo 2^64 and writes no other word of s.
func XORKeyStream64(s *State, rounds int, dst, src []byte) {
	checkOutput(dst, src)
	// The kernels count modulo 2^32 in s[12]: split where it wraps, carry.
	for {
		n := min(uint64(len(src)), (1<<32-uint64(s[12]))*BlockSize)
		XORKeyStream(s, rounds, dst[:n], src[:n])
		if n > 0 && s[12] == 0 {
			s[13]++
		}
		if n == uint64(len(src)) {
			return
		}
		dst, src = dst[n:], src[n:]
	}
}

// XORKeyStreamHead writes the key stream block at the counter s[12] to
// head, then XORs key stream into dst from src as [XORKeyStream] does from
// the next block on (same rules for dst, src and rounds; head must not
// overlap them): the same as XORKeyStream into a zeroed head followed by
// XORKeyStream(s, rounds, dst, src).
//
// It exists for RFC 8439 AEADs, whose block 0 is the Poly1305 key: a lone
// block costs a whole kernel call of latency-bound rounds, and the AVX-512
// kernel computes it instead beside the first group of message blocks, in
// the gaps of their rounds, for nearly nothing.
func XORKeyStreamHead(s *State, rounds int, head *[BlockSize]byte, dst, src []byte) {
	checkOutput(dst, src)
	if n := headArch(kernels.Active(), s, rounds, head, dst, src); n > 0 {
		if n < len(src) {
			XORKeyStream(s, rounds, dst[n:], src[n:])
		}
		return
	}
	*head = [BlockSize]byte{}
	xorBlocks(s, rounds, head[:], head[:], kernels.Active())
	XORKeyStream(s, rounds, dst, src)
}

// HeadFused reports whether the active kernel computes XORKeyStreamHead's
// head block inside the call for the first message blocks (from 9 of
// them on), rather than in a latency-bound call of its own: a caller that
// would otherwise take block 0 alone can then get it for nearly nothing.
func HeadFused() bool { return headFused(kernels.Active()) }

// checkOutput panics, before anything is written, if dst is shorter than
// src.
func checkOutput(dst, src []byte) {
	if len(dst) < len(src) {
		panic("chachacore: output smaller than input")
	}
}

// maxCallBytes bounds one assembly call, so that a goroutine inside a
// kernel reaches a preemption point within tens of microseconds.
const maxCallBytes = 64 * 1024

// kernels lists the implementations compiled in; the architecture files
// register theirs at init.
var kernels = impl.New("chachacore")

// Kernel names the implementation XORKeyStream uses on this CPU.
func Kernel() string { return kernels.Name() }

// Kernels lists the implementations this CPU can run, best first, ending
// with "generic". For tests and diagnostics.
func Kernels() []string { return kernels.Names() }

// UseKernel makes XORKeyStream use the named implementation until the
// returned function restores the previous one. It exists so tests can run
// every path the CPU supports; it is not safe to call while other goroutines
// generate key stream.
func UseKernel(name string) (restore func(), err error) { return kernels.Use(name) }
