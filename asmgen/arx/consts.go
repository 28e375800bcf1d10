package arx

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
)

// Tables are 64 bytes, so the widest load reads a whole table and the Go
// linker aligns them to 32 bytes (enough for SSE's 16-byte rule on memory
// operands). Each is emitted once per generated file, on first use.
var tables = map[string]operand.Mem{}

func table(name string, word func(k int) uint32) operand.Mem {
	if m, ok := tables[name]; ok {
		return m
	}
	m := build.GLOBL(name, attr.RODATA|attr.NOPTR)
	for k := range 16 {
		build.DATA(4*k, operand.U32(word(k)))
	}
	tables[name] = m
	return m
}

// rotBytes is the PSHUFB table that rotates every 32-bit lane left by n, a
// multiple of 8: output byte b of a lane takes input byte (b - n/8) mod 4.
func rotBytes(n int) func(k int) uint32 {
	return func(k int) uint32 {
		var w uint32
		for b := range 4 {
			src := uint32(4*(k%4) + (b-n/8+4)%4)
			w |= src << (8 * b)
		}
		return w
	}
}

// Rot16 returns the 64-byte PSHUFB table rotating each 32-bit lane left by
// 16, valid for XMM, YMM and ZMM (VPSHUFB shuffles within 128-bit lanes).
func Rot16() operand.Mem { return table("rot16_arx", rotBytes(16)) }

// Rot8 returns the 64-byte PSHUFB table rotating each 32-bit lane left by 8.
func Rot8() operand.Mem { return table("rot8_arx", rotBytes(8)) }

// LaneIndex returns the 64-byte table {0, 1, ..., 15} of 32-bit words: added
// to a broadcast block counter it gives each lane of a vertical kernel its
// own block (the first Lanes() words serve narrower vectors).
func LaneIndex() operand.Mem { return table("laneidx_arx", func(k int) uint32 { return uint32(k) }) }

// Words returns a 64-byte table named name holding the 16 given words, for
// kernel-specific constants (e.g. per-lane counter increments of a row
// layout). Asking again for the same name returns the first table.
func Words(name string, w [16]uint32) operand.Mem {
	return table(name, func(k int) uint32 { return w[k] })
}

// Splat returns a table with n in every 32-bit lane, e.g. to step the
// per-lane block counters of a vertical kernel by its width.
func Splat(n int) operand.Mem {
	var t [16]uint32
	for k := range t {
		t[k] = uint32(n)
	}
	return Words(fmt.Sprintf("splat%d_arx", n), t)
}

// LaneCounters returns the table to add to a broadcast block counter in a
// vertical kernel with isa's vectors: lane k of interleaved set set gets
// block set*lanes + k of the group.
func LaneCounters(isa ISA, set int) operand.Mem {
	lanes := isa.Lanes()
	if set == 0 && lanes == 16 {
		return LaneIndex()
	}
	var t [16]uint32
	for k := range t {
		t[k] = uint32(set*lanes + k%lanes)
	}
	return Words(fmt.Sprintf("lane%d_%d_arx", lanes, set), t)
}

// RowCounters returns the table to add to the counter row of a row-layout
// kernel, where each 128-bit lane holds one block and the counter is its
// first word: 128-bit lane l gets first + step*l in that word and 0 in the
// other three. (first, 1) numbers the blocks of a group from first; (n, 0)
// moves every block on by n.
func RowCounters(first, step int) operand.Mem {
	var t [16]uint32
	for l := range 4 {
		t[4*l] = uint32(first + step*l)
	}
	return Words(fmt.Sprintf("row%d_%d_arx", first, step), t)
}
