package arx

import (
	"fmt"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Signature is the Go signature every keystream kernel shares: it XORs
// len(src)/64 blocks of key stream into dst and advances the low counter
// word of s by that many blocks, modulo 2^32.
const Signature = "func(s *[16]uint32, rounds int, dst, src []byte)"

// SignatureWith is [Signature] with one more parameter after src, for a
// kernel that needs an input or output of its own (ChaCha's head block,
// Salsa20's precomputed first round).
func SignatureWith(param string) string {
	return "func(s *[16]uint32, rounds int, dst, src []byte, " + param + ")"
}

// Args are the parameters of [Signature] in general registers.
type Args struct {
	S        operand.Mem   // the state words
	Rounds   reg.Register  // double rounds: loaded as rounds/2
	Dst, Src reg.Register  // block pointers, advanced by the kernel
	Blocks   reg.Register  // blocks still to do, counted down by the kernel
	Total    reg.GPVirtual // blocks of the whole call, for the counter word
}

// LoadArgs loads the parameters of [Signature] into new virtual registers.
func LoadArgs() Args {
	var a Args
	a.S = operand.Mem{Base: build.Load(build.Param("s"), build.GP64())}
	a.Rounds = build.Load(build.Param("rounds"), build.GP64())
	build.SHRQ(operand.U8(1), a.Rounds)
	a.Dst = build.Load(build.Param("dst").Base(), build.GP64())
	a.Src = build.Load(build.Param("src").Base(), build.GP64())
	a.Blocks = build.Load(build.Param("src").Len(), build.GP64())
	build.SHRQ(operand.U8(6), a.Blocks)
	a.Total = build.GP64()
	build.MOVQ(a.Blocks, a.Total)
	return a
}

// Finish adds the blocks of the call to the low counter word s[counter]
// (modulo 2^32) and returns.
func (a Args) Finish(isa ISA, counter int) {
	build.ADDL(a.Total.As32(), a.S.Offset(4*counter))
	isa.VZeroUpper()
	build.RET()
}

// skips numbers the labels [Args.XorBlock] jumps to, unique in the file.
var skips int

// XorBlock emits the XOR of one vector of key stream, v, into bytes
// 64*block+offset onwards of dst, reading the same bytes of src. v is
// clobbered; SSSE3 also takes a new scratch register for the unaligned
// load. With guarded set the store happens only if more than block blocks
// are left (a.Blocks > block), for a kernel's last, partial group: its
// first block always exists.
func (a Args) XorBlock(isa ISA, block, offset int, v reg.Register, guarded bool) {
	var skip string
	if guarded && block > 0 {
		skips++
		skip = fmt.Sprintf("skip%d", skips)
		build.CMPQ(a.Blocks, operand.U8(block))
		build.JBE(operand.LabelRef(skip))
	}
	var tmp reg.Register
	if !isa.VEX {
		tmp = isa.Vec()
	}
	d := 64*block + offset
	isa.XorStore(operand.Mem{Base: a.Dst, Disp: d}, operand.Mem{Base: a.Src, Disp: d}, v, tmp)
	if skip != "" {
		build.Label(skip)
	}
}
