// Command aead generates the one-call AEAD kernels of internal/aeadcore
// (run it through `make generate`):
//
//	go run ./aead -out ../internal/aeadcore/aead_amd64.s \
//	    -stubs ../internal/aeadcore/aead_stubs_amd64.go -pkg aeadcore
//
// Each kernel seals or opens a whole short message in one call: block 0
// (the Poly1305 key) beside the message's key stream blocks, the XOR, and
// Poly1305 over the additional data, the ciphertext and the lengths (or,
// for secretbox, the ciphertext alone) in general registers, and the tag;
// the 16-block kernels (kernel16) run Poly1305 in AVX-512 IFMA lanes.
// See internal/aeadcore for the contract and docs/KERNELS.md for the
// measurements behind the layouts.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"

	"github.com/spipe-dev/spipe/asmgen/arx"
)

// The quarter rounds of a ChaCha double round, as indices of the 16 state
// words.
var (
	columns   = [4][4]int{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}
	diagonals = [4][4]int{{0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14}}
)

func main() {
	ConstraintExpr("gc,!purego")

	for _, k := range kernelList {
		kernel(k.name+"Seal", k.l, false)
		kernel(k.name+"Open", k.l, true)
	}
	kernel16("chachaPolyIFMAx16Seal", false)
	kernel16("chachaPolyIFMAx16Open", true)
	kernelShort("chachaPolyIFMAx4Seal", 1, false)
	kernelShort("chachaPolyIFMAx4Open", 1, true)
	kernelShort("chachaPolyIFMAx8Seal", 2, false)
	kernelShort("chachaPolyIFMAx8Open", 2, true)
	kernel16Secretbox("secretboxIFMAx16Seal", false)
	kernel16Secretbox("secretboxIFMAx16Open", true)
	// Branches test counters (DECQ), lengths (TESTQ, CMPQ, ANDQ on the
	// message's and the additional data's) and, once, the verdict of
	// Open's tag comparison (TESTQ), which is public.
	arx.Generate("aead", arx.CheckConstantTime("DECQ", "TESTQ", "CMPQ", "ANDQ"))
}

// kernelList is every kernel pair (seal and open), by layout.
var kernelList = []struct {
	name string
	l    layout
}{
	// Block 0 and 1 in one YMM row set: a 1-block message is one
	// latency-bound chain whatever the layout, and the 3-cycle step
	// shortens it.
	{"chachaPolyAVX512x1", layout{cipher: chacha, max: 64,
		sets: []setPlan{{isa: arx.AVX512VL256, first: 0, lowLat: true}}}},
	// Blocks 0-3 in one ZMM row set.
	{"chachaPolyAVX512x3", layout{cipher: chacha, max: 192,
		sets: []setPlan{{isa: arx.AVX512, first: 0}}}},
	// Blocks 1-4 in one ZMM row set, block 0 in general registers.
	{"chachaPolyAVX512x4", layout{cipher: chacha, max: 256, scalar: true,
		sets: []setPlan{{isa: arx.AVX512, first: 1}}}},
	// secretbox: the message starts at byte 32 of block 0, so blocks 0
	// and 1 cover 96 bytes of it.
	{"secretboxAVX512x1", layout{cipher: salsa, max: 96,
		sets: []setPlan{{isa: arx.AVX512VL256, first: 0, lowLat: true}}}},
	{"secretboxAVX512x3", layout{cipher: salsa, max: 224,
		sets: []setPlan{{isa: arx.AVX512, first: 0}}}},
	// Block 0 alone in an XMM set beside blocks 1-4 in a ZMM one (for
	// ChaCha block 0 in general registers measured faster, for Salsa20
	// this beat two ZMM sets by 10%).
	{"secretboxAVX512x4", layout{cipher: salsa, max: 288,
		sets: []setPlan{{isa: arx.AVX512VL128, first: 0, lowLat: true}, {isa: arx.AVX512, first: 1}}}},
	// Blocks 0-7 in two ZMM sets.
	{"secretboxAVX512x7", layout{cipher: salsa, max: 480,
		sets: []setPlan{{isa: arx.AVX512, first: 0}, {isa: arx.AVX512, first: 4}}}},
}

func fmtName(f string, a ...any) string { return fmt.Sprintf(f, a...) }
