package poly1305

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/spipe-dev/spipe/internal/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	//lint:ignore SA1019 x/crypto's Poly1305 is the independent oracle here.
	xpoly "golang.org/x/crypto/poly1305"
)

func randomKey(r *rand.Rand) *[KeySize]byte {
	var k [KeySize]byte
	copy(k[:], testutil.Bytes(r, KeySize))
	return &k
}

func xcryptoSum(key *[KeySize]byte, msg []byte) [TagSize]byte {
	var tag [TagSize]byte
	xpoly.Sum(&tag, msg, key)
	return tag
}

// TestEveryLength compares every kernel with the generic reference and
// with x/crypto for every message length 0..4096 (a fresh random key per
// length), one-shot and through a MAC written in two pieces split at a
// random point.
func TestEveryLength(t *testing.T) {
	r := testutil.Rand(t)
	const maxLen = 4096
	msg := testutil.Bytes(r, maxLen)
	keys := make([]*[KeySize]byte, maxLen+1)
	want := make([][TagSize]byte, maxLen+1)
	for n := range keys {
		keys[n] = randomKey(r)
		want[n] = xcryptoSum(keys[n], msg[:n])
		require.Equal(t, want[n], referenceSum(keys[n], msg[:n]), "reference vs x/crypto, length %d", n)
	}
	forEachKernel(t, func(t *testing.T) {
		for n := 0; n <= maxLen; n++ {
			var got [TagSize]byte
			Sum(&got, msg[:n], keys[n])
			if !assert.Equal(t, want[n], got, "length %d", n) {
				return
			}
			split := r.IntN(n + 1)
			m := New(keys[n])
			m.Write(msg[:split])
			m.Write(msg[split:n])
			if !assert.Equal(t, want[n][:], m.Sum(nil), "length %d split at %d", n, split) {
				return
			}
		}
	})
}

// TestRandomChunkings writes long messages in random pieces (from single
// bytes to several vector strides), so partial blocks, the buffered tail
// and vector groups meet at every alignment, on every kernel.
func TestRandomChunkings(t *testing.T) {
	r := testutil.Rand(t)
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	type trial struct {
		key    *[KeySize]byte
		msg    []byte
		chunks []int
		want   [TagSize]byte
	}
	trials := make([]trial, rounds)
	for i := range trials {
		n := r.IntN(20000)
		tr := trial{key: randomKey(r), msg: testutil.Bytes(r, n)}
		for left := n; left > 0; {
			var c int
			switch r.IntN(4) {
			case 0:
				c = r.IntN(17)
			case 1:
				c = r.IntN(300)
			default:
				c = r.IntN(5000)
			}
			c = min(c, left)
			tr.chunks = append(tr.chunks, c)
			left -= c
		}
		tr.want = xcryptoSum(tr.key, tr.msg)
		trials[i] = tr
	}
	forEachKernel(t, func(t *testing.T) {
		for i, tr := range trials {
			m := New(tr.key)
			rest := tr.msg
			for _, c := range tr.chunks {
				n, err := m.Write(rest[:c])
				require.NoError(t, err)
				require.Equal(t, c, n)
				rest = rest[c:]
			}
			if !assert.Equal(t, tr.want[:], m.Sum(nil), "trial %d: %d bytes in %d chunks", i, len(tr.msg), len(tr.chunks)) {
				return
			}
		}
	})
}

// TestLongMessages crosses the 64 KiB bound on one assembly call, also by
// less than a vector kernel's smallest call, through Sum and SumAEAD.
func TestLongMessages(t *testing.T) {
	r := testutil.Rand(t)
	msg := testutil.Bytes(r, 3<<17+77)
	key := randomKey(r)
	want := xcryptoSum(key, msg)
	const bound = 64 << 10 // the amd64 kernels' maxCallBytes
	lengths := []int{bound + 16, bound + 100, bound + 240, bound + 256, 2*bound + 48}
	forEachKernel(t, func(t *testing.T) {
		var got [TagSize]byte
		Sum(&got, msg, key)
		assert.Equal(t, want, got)
		for _, n := range lengths {
			Sum(&got, msg[:n], key)
			assert.Equal(t, xcryptoSum(key, msg[:n]), got, "Sum, %d bytes", n)
			SumAEAD(&got, key, nil, msg[:n])
			assert.Equal(t, xcryptoSum(key, aeadMACInput(nil, msg[:n])), got, "SumAEAD, %d bytes", n)
		}
	})
}

// TestEdgeValues drives the accumulator near 2^130 - 5 and the key halves
// to their extremes, where a wrong final reduction or a lost carry shows:
// all-ones blocks (the largest block value, 2^129 - 1), keys with r clamped
// to its maximum or tiny and s = 0 or 2^128 - 1, and blocks chosen so that
// h lands on p - 1, p, p + 1 and just below 2^130 before the final step.
func TestEdgeValues(t *testing.T) {
	r := testutil.Rand(t)
	ones := bytes.Repeat([]byte{0xff}, 4096+15)
	zeros := make([]byte, 4096+15)
	var keys []*[KeySize]byte
	for _, rb := range []byte{0x00, 0xff} {
		for _, sb := range []byte{0x00, 0xff} {
			var k [KeySize]byte
			for i := range 16 {
				k[i] = rb
				k[16+i] = sb
			}
			keys = append(keys, &k)
		}
	}
	one := [KeySize]byte{0: 1} // r = 1: h is the plain sum of the blocks
	oneMaxS := one
	for i := 16; i < 32; i++ {
		oneMaxS[i] = 0xff
	}
	keys = append(keys, &one, &oneMaxS, randomKey(r))

	var msgs [][]byte
	for _, n := range []int{1, 15, 16, 17, 64, 255, 256, 257, 1024, 4096, 4111} {
		msgs = append(msgs, ones[:n], zeros[:n])
	}
	// With r = 1, h is the sum of the blocks with their 2^128 bits: four
	// all-ones blocks make 2^131 - 4, three make 3·2^129 - 3 (both above
	// 2^130, between 2p and 3p before the final step); lowering the last
	// block by 0..10 walks h across multiples of p.
	for _, d := range []byte{0, 1, 2, 3, 4, 5, 6, 7, 10} {
		m := bytes.Repeat([]byte{0xff}, 64)
		m[48] -= d
		m3 := bytes.Repeat([]byte{0xff}, 48)
		m3[32] -= d
		msgs = append(msgs, m, m3)
	}
	for _, key := range keys {
		for _, msg := range msgs {
			want := xcryptoSum(key, msg)
			require.Equal(t, want, referenceSum(key, msg), "reference, key %x, %d bytes", key[:], len(msg))
		}
	}
	forEachKernel(t, func(t *testing.T) {
		for _, key := range keys {
			for _, msg := range msgs {
				want := xcryptoSum(key, msg)
				var got [TagSize]byte
				Sum(&got, msg, key)
				assert.Equal(t, want, got, "key %x, message %x…, %d bytes", key[:], msg[:min(len(msg), 4)], len(msg))
			}
		}
	})
}

// TestReduce checks the final reduction on values around p and 2^130
// directly, with the expected residues worked out by hand.
func TestReduce(t *testing.T) {
	// p = 2^130 - 5 as limbs.
	p := [3]uint64{0xfffffffffffffffb, 0xffffffffffffffff, 3}
	cases := []struct{ in, want [3]uint64 }{
		{[3]uint64{0, 0, 0}, [3]uint64{0, 0, 0}},
		{[3]uint64{p[0] - 1, p[1], p[2]}, [3]uint64{p[0] - 1, p[1], p[2]}},           // p - 1
		{p, [3]uint64{0, 0, 0}},                                                      // p
		{[3]uint64{p[0] + 1, p[1], p[2]}, [3]uint64{1, 0, 0}},                        // p + 1
		{[3]uint64{0xffffffffffffffff, 0xffffffffffffffff, 3}, [3]uint64{4, 0, 0}},   // 2^130 - 1
		{[3]uint64{0, 0, 4}, [3]uint64{5, 0, 0}},                                     // 2^130
		{[3]uint64{0xfffffffffffffffa, 0xffffffffffffffff, 7}, [3]uint64{4, 0, 0}},   // 2^131 - 6 = p + 2^130 - 1 = 2p + 4
		{[3]uint64{0xffffffffffffffff, 0xffffffffffffffff, 15}, [3]uint64{19, 0, 0}}, // 2^132 - 1 = 4p + 19
	}
	for _, c := range cases {
		assert.Equal(t, c.want, reduce3(c.in), "reduce(%x)", c.in)
	}
}

// TestMixedWrites writes two MACs with different keys in turn, in pieces
// on both sides of the scalar/vector threshold (so the vector kernels run
// between scalar blocks and buffered partial blocks), and a copy of a MAC
// taken partway carries on like the original with another message. Every
// tag is checked against x/crypto.
func TestMixedWrites(t *testing.T) {
	r := testutil.Rand(t)
	sizes := []int{ifmaThresholdForTest, 16, 3, 1000, 17, ifmaThresholdForTest - 16,
		ifmaThresholdForTest + 16, 112, 128, 129, 256, 4096, 1, 5000, 48, 700}
	total := 0
	for _, n := range sizes {
		total += n
	}
	forEachKernel(t, func(t *testing.T) {
		for trial := range 20 {
			k1, k2 := randomKey(r), randomKey(r)
			m1, m2 := testutil.Bytes(r, total), testutil.Bytes(r, total)
			a, b := New(k1), New(k2)
			off := 0
			var fork *MAC
			forkAt := r.IntN(len(sizes))
			for i, n := range sizes {
				a.Write(m1[off : off+n])
				b.Write(m2[off : off+n])
				off += n
				if i == forkAt {
					c := *a
					fork = &c
				}
			}
			want1, want2 := xcryptoSum(k1, m1), xcryptoSum(k2, m2)
			assert.Equal(t, want1[:], a.Sum(nil), "trial %d: first MAC", trial)
			assert.Equal(t, want2[:], b.Sum(nil), "trial %d: second MAC", trial)

			cut := 0
			for _, n := range sizes[:forkAt+1] {
				cut += n
			}
			fork.Write(m2[cut:]) // the fork continues with another message
			want := xcryptoSum(k1, append(append([]byte{}, m1[:cut]...), m2[cut:]...))
			assert.Equal(t, want[:], fork.Sum(nil), "trial %d: copy after %d bytes", trial, cut)
		}
	})
}

// TestPageBoundaryStarts runs every kernel over messages that start on and
// just after a page boundary, with every number of blocks in the vector
// kernels' first group: the IFMA kernel then copies its first group to an
// aligned stage instead of loading it across the boundary (see polyIFMA),
// and the result must not change.
func TestPageBoundaryStarts(t *testing.T) {
	r := testutil.Rand(t)
	buf := make([]byte, 4*4096)
	copy(buf, testutil.Bytes(r, len(buf)))
	page := 4096 - int(uintptr(unsafe.Pointer(&buf[0]))&4095)
	tail := testutil.Bytes(r, 32)
	forEachKernel(t, func(t *testing.T) {
		for _, at := range []int{0, 16, 48, 64, 112, 240, 256, 4096 - 16} {
			for n := 384; n <= 384+16*16; n += 16 {
				msg := buf[page+at : page+at+n]
				var st state
				st.init(randomKey(r))
				want, got := st, st
				blocksGeneric(&want, msg)
				blocksGeneric(&want, tail[:16])
				updateBlocksTail(&got, msg, tail[:16])
				if !assert.Equal(t, reduce3(want.h), reduce3(got.h), "%d bytes at page + %d", n, at) {
					return
				}
			}
		}
	})
}
