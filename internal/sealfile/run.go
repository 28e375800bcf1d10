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
	// Argon2Ceiling bounds what a passphrase file's header may ask of
	// Argon2id when opening (nil: the library's default).
	Argon2Ceiling *sealed.Argon2Params
	Stdin         io.Reader
	Stdout        io.Writer
	Stderr        io.Writer
}

// input is what a run reads: a stream, and for a regular file also
// random access to it and its size.
type input struct {
	r     io.Reader
	at    io.ReaderAt // nil unless a regular file
	size  int64       // -1 unless a regular file
	close func()
}

// input opens the input. Standard input that is a regular file (spipe
// seal < file) is read with random access from its current offset.
func (j *Job) input() (*input, error) {
	if j.In == "" || j.In == "-" {
		in := &input{r: j.Stdin, size: -1, close: func() {}}
		if f, ok := j.Stdin.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				if pos, err := f.Seek(0, io.SeekCurrent); err == nil && pos <= fi.Size() {
					in.size = fi.Size() - pos
					in.at = io.NewSectionReader(f, pos, in.size)
				}
			}
		}
		return in, nil
	}
	f, err := os.Open(j.In)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file", j.In)
		}
		return nil, fmt.Errorf("%s: %w", j.In, unwrapPath(err))
	}
	in := &input{r: f, size: -1, close: func() { f.Close() }}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("%s: %w", j.In, unwrapPath(err))
	case fi.IsDir():
		f.Close()
		return nil, fmt.Errorf("%s: is a directory", j.In)
	case fi.Mode().IsRegular():
		in.at, in.size = f, fi.Size()
	}
	return in, nil
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
	in, err := j.input()
	if err != nil {
		return err
	}
	defer in.close()
	out, err := CreateOutput(j.Out, j.Force, j.Stdout)
	if err != nil {
		return err
	}
	bar := newProgress(showProgress(j.Progress, j.Stderr, in.size), j.Stderr, in.size, "sealing")
	w, err := sealed.NewWriter(out, secret, opts)
	if err == nil {
		if in.at != nil {
			// A file: the workers read their own chunks.
			_, err = w.ReadFromAt(bar.readerAt(in.at), in.size)
		} else {
			_, err = io.Copy(w, bar.reader(in.r))
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
	in, err := j.input()
	if err != nil {
		return err
	}
	defer in.close()
	if in.at != nil {
		return openAt(j, in.at, in.size, secret, rg)
	}
	out, err := CreateOutput(j.Out, j.Force, j.Stdout)
	if err != nil {
		return err
	}
	bar := newProgress(showProgress(j.Progress, j.Stderr, -1), j.Stderr, -1, "opening")
	r, err := sealed.NewReader(bar.reader(in.r), secret, j.readOptions())
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
func openAt(j *Job, f io.ReaderAt, size int64, secret *sealed.Secret, rg Range) error {
	ra, err := sealed.NewReaderAt(f, size, secret, j.readOptions())
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

// readOptions are the options an open passes the library.
func (j *Job) readOptions() *sealed.Options {
	return &sealed.Options{Workers: j.Workers, Argon2Ceiling: j.Argon2Ceiling}
}
