package sealed_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// benchChunkSizes are the sizes docs/FILE.md compares to choose
// DefaultChunkSize.
var benchChunkSizes = []int{16 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20}

// benchTotal is what each sealing and opening benchmark moves per
// iteration: enough chunks of every size that the final one's cost is
// noise.
const benchTotal = 16 << 20

// BenchmarkSeal seals 16 MiB with one worker into io.Discard, through
// io.Copy (Writer.ReadFrom), per chunk size.
func BenchmarkSeal(b *testing.B) {
	pt := plaintext(benchTotal, 1)
	for _, cs := range benchChunkSizes {
		b.Run(fmt.Sprintf("chunk=%dKiB", cs>>10), func(b *testing.B) {
			s := testKey(b)
			b.SetBytes(benchTotal)
			b.ReportAllocs()
			for b.Loop() {
				w, err := sealed.NewWriter(io.Discard, s, &sealed.Options{ChunkSize: cs, Workers: 1})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(w, bytes.NewReader(pt)); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOpen opens 16 MiB with one worker into io.Discard, through
// io.Copy (Reader.WriteTo), per chunk size.
func BenchmarkOpen(b *testing.B) {
	pt := plaintext(benchTotal, 1)
	for _, cs := range benchChunkSizes {
		b.Run(fmt.Sprintf("chunk=%dKiB", cs>>10), func(b *testing.B) {
			s := testKey(b)
			file := seal(b, s, pt, &sealed.Options{ChunkSize: cs, Workers: 1})
			b.SetBytes(benchTotal)
			b.ReportAllocs()
			for b.Loop() {
				r, err := sealed.NewReader(bytes.NewReader(file), s, &sealed.Options{Workers: 1})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadAt1MiB reads a 1 MiB range at an unaligned offset near the
// end of a 16 MiB file, per chunk size: what a random read costs beyond
// the bytes it asks for.
func BenchmarkReadAt1MiB(b *testing.B) {
	pt := plaintext(benchTotal, 1)
	for _, cs := range benchChunkSizes {
		b.Run(fmt.Sprintf("chunk=%dKiB", cs>>10), func(b *testing.B) {
			s := testKey(b)
			file := seal(b, s, pt, &sealed.Options{ChunkSize: cs, Workers: 1})
			r, err := sealed.NewReaderAt(bytes.NewReader(file), int64(len(file)), s, nil)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 1<<20)
			off := r.Size() - int64(len(buf)) - 12345
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.ReadAt(buf, off); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
