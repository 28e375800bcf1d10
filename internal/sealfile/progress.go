package sealfile

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressMin is the smallest input of known size that gets a progress
// bar on a terminal without --progress: smaller ones finish before a bar
// says anything useful.
const progressMin = 64 << 20

// showProgress says whether to draw a bar on stderr: always with
// --progress; on a terminal for an input of unknown size or of
// progressMin and more; never otherwise (a pipe or a log gets nothing).
func showProgress(forced bool, stderr io.Writer, size int64) bool {
	if forced {
		return true
	}
	f, ok := stderr.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && (size < 0 || size >= progressMin)
}

// progress counts bytes through a bar: size bytes (-1: unknown, a
// spinner with the count and rate), drawn on stderr at most five times a
// second, bytes in IEC units, rate and time left.
type progress struct {
	bar    *progressbar.ProgressBar
	stderr io.Writer
}

func newProgress(show bool, stderr io.Writer, size int64, what string) *progress {
	if !show {
		return nil
	}
	return &progress{stderr: stderr, bar: progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetWidth(30),
	)}
}

// reader counts what r gives through the bar.
func (p *progress) reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return &countingReader{r: r, bar: p.bar}
}

// done finishes the bar (drawn full on success) and ends its line.
func (p *progress) done(ok bool) {
	if p == nil {
		return
	}
	if ok {
		p.bar.Finish()
	} else {
		p.bar.Exit()
	}
	fmt.Fprintln(p.stderr)
}

// readerAt counts what r gives through the bar (ReadAt calls come from
// several workers; the bar locks).
func (p *progress) readerAt(r io.ReaderAt) io.ReaderAt {
	if p == nil {
		return r
	}
	return &countingReaderAt{r: r, bar: p.bar}
}

// writer counts what is written to w through the bar.
func (p *progress) writer(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return io.MultiWriter(w, p.bar)
}

type countingReaderAt struct {
	r   io.ReaderAt
	bar *progressbar.ProgressBar
}

func (c *countingReaderAt) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(b, off)
	c.bar.Add64(int64(n))
	return n, err
}

type countingReader struct {
	r   io.Reader
	bar *progressbar.ProgressBar
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.bar.Add64(int64(n))
	return n, err
}
