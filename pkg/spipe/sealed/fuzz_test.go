package sealed_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// FuzzOpenChunks feeds arbitrary chunk bytes after a valid header to the
// stream Reader (one worker and three) and the ReaderAt: none may panic
// or return a byte that is not the sealed plaintext's, and a file one of
// them accepts, the others accept with the same plaintext.
func FuzzOpenChunks(f *testing.F) {
	s := testKey(f)
	pt := plaintext(3*sealed.MinChunkSize+50, 5)
	file := seal(f, s, pt, &sealed.Options{ChunkSize: sealed.MinChunkSize})
	header := file[:sealed.HeaderSize]
	f.Add(file[sealed.HeaderSize:])
	f.Add(file[sealed.HeaderSize : len(file)-1])
	f.Add(file[sealed.HeaderSize : sealed.HeaderSize+sealed.MinChunkSize+sealed.TagSize])
	f.Add([]byte{})
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, payload []byte) {
		bad := append(bytes.Clone(header), payload...)
		var results [][]byte
		for _, workers := range []int{1, 3} {
			r, err := sealed.NewReader(bytes.NewReader(bad), s, &sealed.Options{Workers: workers})
			if err != nil {
				t.Fatal(err) // the header is valid
			}
			got, err := io.ReadAll(r)
			if !bytes.HasPrefix(pt, got) {
				t.Fatalf("the Reader returned bytes that are not the plaintext's")
			}
			if err == nil {
				results = append(results, got)
			}
		}
		ra, err := sealed.NewReaderAt(bytes.NewReader(bad), int64(len(bad)), s, nil)
		if err == nil {
			got := make([]byte, ra.Size())
			if n, err := ra.ReadAt(got, 0); err == nil || (err == io.EOF && n == len(got)) {
				results = append(results, got)
			} else if !bytes.HasPrefix(pt, got[:n]) {
				t.Fatalf("ReadAt returned bytes that are not the plaintext's")
			}
		}
		if len(results) != 0 && len(results) != 3 {
			t.Fatalf("readers disagree: %d of 3 accepted", len(results))
		}
		for _, r := range results {
			if !bytes.Equal(r, pt) {
				t.Fatalf("a reader accepted a file with another plaintext")
			}
		}
	})
}
