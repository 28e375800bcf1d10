package sealed_test

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// sealedReaderAt seals pt and returns a ReaderAt over the file.
func sealedReaderAt(t *testing.T, pt []byte) *sealed.ReaderAt {
	t.Helper()
	file := seal(t, testKey(t), pt, &sealed.Options{ChunkSize: sealed.MinChunkSize})
	ra, err := sealed.NewReaderAt(bytes.NewReader(file), int64(len(file)), testKey(t), nil)
	require.NoError(t, err)
	return ra
}

// TestServeContent serves an encrypted file with net/http's
// ServeContent through an io.SectionReader, over a real HTTP server, and
// asks for the whole file, ranges, a multi-range and a range past the end.
func TestServeContent(t *testing.T) {
	pt := plaintext(10*sealed.MinChunkSize+123, 3)
	ra := sealedReaderAt(t, pt)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "data.bin", time.Unix(0, 0), io.NewSectionReader(ra, 0, ra.Size()))
	}))
	defer srv.Close()
	get := func(rangeHeader string) (*http.Response, []byte) {
		req, err := http.NewRequest("GET", srv.URL, nil)
		require.NoError(t, err)
		if rangeHeader != "" {
			req.Header.Set("Range", rangeHeader)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, body
	}
	resp, body := get("")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, pt, body)
	resp, body = get("bytes=1000-5000")
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, pt[1000:5001], body)
	resp, body = get("bytes=-100")
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.Equal(t, pt[len(pt)-100:], body)
	resp, body = get("bytes=0-9,3000-3009")
	assert.Equal(t, http.StatusPartialContent, resp.StatusCode)
	assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "multipart/byteranges"))
	assert.Contains(t, string(body), string(pt[3000:3010]))
	resp, _ = get("bytes=999999-")
	assert.Equal(t, http.StatusRequestedRangeNotSatisfiable, resp.StatusCode)
}

// TestZipInside reads a zip archive that was sealed, with archive/zip
// straight over the ReaderAt: the central directory at the end and each
// member opened where it lies.
func TestZipInside(t *testing.T) {
	var archive bytes.Buffer
	zw := zip.NewWriter(&archive)
	members := map[string][]byte{"a.txt": []byte("hello from a\n"), "big.bin": plaintext(50000, 9), "empty": nil}
	for name, data := range members {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())

	ra := sealedReaderAt(t, archive.Bytes())
	zr, err := zip.NewReader(ra, ra.Size())
	require.NoError(t, err)
	require.Len(t, zr.File, len(members))
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		rc.Close()
		assert.True(t, bytes.Equal(members[f.Name], got), f.Name)
	}
}

// TestSectionReader: io.SectionReader's Read, Seek and ReadAt over the
// ReaderAt.
func TestSectionReader(t *testing.T) {
	pt := plaintext(5*sealed.MinChunkSize+7, 4)
	ra := sealedReaderAt(t, pt)
	sr := io.NewSectionReader(ra, 1500, 3000)
	got, err := io.ReadAll(sr)
	require.NoError(t, err)
	assert.Equal(t, pt[1500:4500], got)
	_, err = sr.Seek(-10, io.SeekEnd)
	require.NoError(t, err)
	got, err = io.ReadAll(sr)
	require.NoError(t, err)
	assert.Equal(t, pt[4490:4500], got)
	buf := make([]byte, 100)
	n, err := sr.ReadAt(buf, 2950)
	assert.Equal(t, 50, n)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, pt[4450:4500], buf[:n])
}
