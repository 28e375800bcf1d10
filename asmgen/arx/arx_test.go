package arx

import (
	"math/bits"
	"testing"
)

// pshufb applies a PSHUFB table to one 128-bit lane the way the CPU does.
func pshufb(in [16]byte, table func(k int) uint32) [16]byte {
	var out [16]byte
	for b := range 16 {
		idx := byte(table(b/4) >> (8 * (b % 4)))
		out[b] = in[idx&15]
	}
	return out
}

func TestRotTablesRotateEachWord(t *testing.T) {
	words := [4]uint32{0x01234567, 0x89abcdef, 0xdeadbeef, 0x0badf00d}
	var in [16]byte
	for k, w := range words {
		for b := range 4 {
			in[4*k+b] = byte(w >> (8 * b))
		}
	}
	for _, n := range []int{8, 16} {
		out := pshufb(in, rotBytes(n))
		for k, w := range words {
			got := uint32(out[4*k]) | uint32(out[4*k+1])<<8 | uint32(out[4*k+2])<<16 | uint32(out[4*k+3])<<24
			if want := bits.RotateLeft32(w, n); got != want {
				t.Errorf("rot%d word %d: got %#x, want %#x", n, k, got, want)
			}
		}
	}
}

func TestRotateLanes(t *testing.T) {
	for n := range 4 {
		imm := RotateLanes(n)
		for k := range 4 {
			// PSHUFD: destination lane k takes source lane imm[2k+1:2k].
			if src := int(imm>>(2*k)) & 3; src != (k+n)%4 {
				t.Errorf("RotateLanes(%d): lane %d takes %d, want %d", n, k, src, (k+n)%4)
			}
		}
	}
}
