package sealfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// Job is one run of "spipe seal" or "spipe open".
type Job struct {
	In       string // the input file; "" or "-" for Stdin
	Out      string // the output file; "" or "-" for Stdout
	Force    bool   // overwrite Out
	Progress bool   // draw a bar even off a terminal
	Workers  int
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
}

// input opens the input and returns it with its size (-1 if not a
// regular file) and whether it supports random access.
func (j *Job) input() (io.Reader, *os.File, int64, error) {
	if j.In == "" || j.In == "-" {
		if f, ok := j.Stdin.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				return f, f, fi.Size(), nil
			}
		}
		return j.Stdin, nil, -1, nil
	}
	f, err := os.Open(j.In)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, 0, fmt.Errorf("%s: no such file", j.In)
		}
		return nil, nil, 0, fmt.Errorf("%s: %w", j.In, unwrapPath(err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, 0, fmt.Errorf("%s: %w", j.In, unwrapPath(err))
	}
	if fi.IsDir() {
		f.Close()
		return nil, nil, 0, fmt.Errorf("%s: is a directory", j.In)
	}
	if !fi.Mode().IsRegular() {
		return f, nil, -1, nil
	}
	return f, f, fi.Size(), nil
}

// name is the input's name for messages.
func (j *Job) name() string {
	if j.In == "" || j.In == "-" {
		return "standard input"
	}
	return j.In
}

// finish commits or aborts the output and ends the progress bar.
func finish(out *Output, bar *progress, err error) error {
	if err == nil {
		err = out.Commit()
	}
	if err != nil {
		out.Abort()
	}
	bar.done(err == nil)
	return err
}

// Seal seals the input to the output under secret.
func Seal(j *Job, secret *sealed.Secret, opts *sealed.Options) error {
	in, f, size, err := j.input()
	if err != nil {
		return err
	}
	if f != nil && f != j.Stdin {
		defer f.Close()
	}
	out, err := CreateOutput(j.Out, j.Force, j.Stdout)
	if err != nil {
		return err
	}
	bar := newProgress(showProgress(j.Progress, j.Stderr, size), j.Stderr, size, "sealing")
	w, err := sealed.NewWriter(out, secret, opts)
	if err == nil {
		if f != nil {
			// A file: the workers read their own chunks.
			_, err = w.ReadFromAt(bar.readerAt(f), size)
		} else {
			_, err = io.Copy(w, bar.reader(in))
		}
		if err != nil {
			err = fmt.Errorf("sealing %s: %w", j.name(), err)
			w.Close()
		} else {
			err = w.Close()
		}
	}
	return finish(out, bar, err)
}

// Range is the part of the plaintext "spipe open" writes: Length bytes
// from Offset; Length < 0 means to the end.
type Range struct {
	Offset, Length int64
}

// Open opens the input and writes the plaintext, or the range of it, to
// the output. Nothing but authenticated plaintext is written; a -o file
// appears only if the whole input (or, with random access, the header,
// the final chunk and the range's chunks) opened.
func Open(j *Job, secret *sealed.Secret, rg Range) error {
	in, f, size, err := j.input()
	if err != nil {
		return err
	}
	if f != nil && f != j.Stdin {
		defer f.Close()
	}
	if f != nil {
		return openAt(j, f, size, secret, rg)
	}
	out, err := CreateOutput(j.Out, j.Force, j.Stdout)
	if err != nil {
		return err
	}
	bar := newProgress(showProgress(j.Progress, j.Stderr, size), j.Stderr, size, "opening")
	r, err := sealed.NewReader(bar.reader(in), secret, &sealed.Options{Workers: j.Workers})
	if err == nil {
		err = copyStream(out, r, rg)
		r.Close()
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", j.name(), err)
	}
	return finish(out, bar, err)
}

// copyStream writes the range of r's plaintext to out, then reads r to its
// end, so the output is kept only if the whole file is authentic.
func copyStream(out io.Writer, r *sealed.Reader, rg Range) error {
	if rg.Offset > 0 {
		if n, err := io.CopyN(io.Discard, r, rg.Offset); err != nil {
			if err == io.EOF {
				return fmt.Errorf("--offset %d is beyond the plaintext's end (%d bytes)", rg.Offset, n)
			}
			return err
		}
	}
	if rg.Length >= 0 {
		if _, err := io.CopyN(out, r, rg.Length); err != nil && err != io.EOF {
			return err
		}
		_, err := io.Copy(io.Discard, r)
		return err
	}
	_, err := io.Copy(out, r)
	return err
}

// openAt opens a file with random access: only the header, the final
// chunk (which authenticates the size) and the chunks that cover the
// range are read, each by the worker that opens it.
func openAt(j *Job, f *os.File, size int64, secret *sealed.Secret, rg Range) error {
	ra, err := sealed.NewReaderAt(f, size, secret, &sealed.Options{Workers: j.Workers})
	if err != nil {
		return fmt.Errorf("%s: %w", j.name(), err)
	}
	if rg.Offset > ra.Size() {
		return fmt.Errorf("--offset %d is beyond the plaintext's end (%d bytes)", rg.Offset, ra.Size())
	}
	n := ra.Size() - rg.Offset
	if rg.Length >= 0 {
		n = min(n, rg.Length)
	}
	out, err := CreateOutput(j.Out, j.Force, j.Stdout)
	if err != nil {
		return err
	}
	bar := newProgress(showProgress(j.Progress, j.Stderr, n), j.Stderr, n, "opening")
	_, err = ra.WriteRangeTo(bar.writer(out), rg.Offset, n)
	if err != nil {
		err = fmt.Errorf("%s: %w", j.name(), err)
	}
	return finish(out, bar, err)
}
