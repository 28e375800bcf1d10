package main

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/spipe-dev/spipe/internal/keyring"
	"github.com/spipe-dev/spipe/internal/sealfile"
	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe/sealed"
)

// The exit statuses of seal and open beyond 0, 1 and 2, one per failure
// a script must tell apart (spipe-open(1) lists them).
const (
	exitWrongKey    = 10 // wrong key or passphrase
	exitNotSealed   = 11 // not a spipe file
	exitVersion     = 12 // a spipe file of an unsupported version
	exitDamaged     = 13 // damaged, truncated, extended or tampered input
	exitOutputExist = 14 // -o file exists, no --force
	exitNotWritable = 15 // -o directory not writable
	exitKDFCeiling  = 16 // Argon2id parameters above --max-argon2-*
)

// exitError carries the exit status an error gets.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// fileExit gives a seal or open failure its exit status.
func fileExit(err error) error {
	code := 0
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sealed.ErrWrongKey):
		code = exitWrongKey
	case errors.Is(err, sealed.ErrNotSealed):
		code = exitNotSealed
	case errors.Is(err, sealed.ErrUnsupportedVersion):
		code = exitVersion
	case errors.Is(err, sealed.ErrDamagedHeader), errors.Is(err, sealed.ErrMalformedHeader),
		errors.Is(err, sealed.ErrTampered), errors.Is(err, sealed.ErrTruncated), errors.Is(err, sealed.ErrTrailingData):
		code = exitDamaged
	case errors.Is(err, sealfile.ErrOutputExists):
		code = exitOutputExist
	case errors.Is(err, sealfile.ErrNotWritable):
		code = exitNotWritable
	case errors.Is(err, sealed.ErrArgon2Ceiling):
		code = exitKDFCeiling
		err = fmt.Errorf("%w (if you trust the file's source, raise --max-argon2-memory or --max-argon2-passes)", err)
	default:
		return err
	}
	return exitError{code, err}
}

// fileFlags are what seal and open share.
type fileFlags struct {
	key        string
	passphrase bool
	out        string
	force      bool
	progress   bool
	workers    int
}

func (f *fileFlags) add(cmd *cobra.Command, verb string) {
	fs := cmd.Flags()
	fs.StringVarP(&f.key, "key", "k", "", "key `FILE` (a spipe keygen key file; - reads it from stdin)")
	fs.BoolVar(&f.passphrase, "passphrase", false, "use a passphrase, read from the terminal, instead of a key file")
	fs.StringVarP(&f.out, "output", "o", "", "write to `FILE` (created only on success) instead of standard output")
	fs.BoolVar(&f.force, "force", false, "overwrite the -o file if it exists")
	fs.BoolVar(&f.progress, "progress", false, "show a progress bar on stderr even when it is not a terminal")
	fs.IntVarP(&f.workers, "jobs", "j", runtime.NumCPU(), "`N` goroutines "+verb+" chunks at once")
}

// job checks the shared flags and returns the run they describe.
func (a *app) fileJob(f *fileFlags, args []string) (*sealfile.Job, error) {
	switch {
	case f.key == "" && !f.passphrase:
		return nil, usagef("give a key file (-k FILE) or --passphrase")
	case f.key != "" && f.passphrase:
		return nil, usagef("-k and --passphrase exclude each other")
	case f.workers < 1:
		return nil, usagef("-j %d: want at least 1", f.workers)
	}
	j := &sealfile.Job{Out: f.out, Force: f.force, Progress: f.progress, Workers: f.workers,
		Stdin: a.stdin, Stdout: a.stdout, Stderr: a.stderr}
	if len(args) == 1 {
		j.In = args[0]
	}
	if f.key == keyring.Stdin && (j.In == "" || j.In == "-") {
		return nil, usagef("-k - and the input cannot both be standard input")
	}
	return j, nil
}

// secret loads the key file or reads the passphrase.
func (a *app) secret(f *fileFlags, confirm bool) (*sealed.Secret, error) {
	if f.passphrase {
		p, err := sealfile.ReadPassphrase(confirm)
		if err != nil {
			return nil, err
		}
		defer clear(p)
		return sealed.Passphrase(p)
	}
	_, keys, err := keyring.Load([]string{f.key}, a.stdin, a.log)
	if err != nil {
		return nil, err
	}
	return sealed.Key(keys[0]), nil
}

func (a *app) sealCommand() *cobra.Command {
	var f fileFlags
	var cipher string
	var chunkSize int
	cmd := &cobra.Command{
		Use:   "seal (-k FILE | --passphrase) [-o OUT] [IN]",
		Short: "Encrypt and authenticate a file (or stdin) into a spipe file",
		Long: `Seal IN (standard input if absent or -) into a spipe file on standard output,
or in OUT with -o: encrypted and authenticated in chunks that each open on
their own, so "spipe open --offset/--length" reads any range without the rest,
and both commands use every core (-j).

The secret is a key file (-k, as "spipe keygen" makes; the same files the
tunnels use) or, for files shared with people, a passphrase read from the
terminal (--passphrase, asked twice; stretched with Argon2id, 64 MiB; taken in
Unicode NFC, so accents typed precomposed or combining are the same).

docs/FILE.md specifies the format. Exit statuses are those of spipe-open(1).`,
		Example: `  tar c dir | spipe seal -k ~/.spipe/key > dir.tar.spipe
  spipe seal -k ~/.spipe/key -o backup.spipe backup.tar
  spipe seal --passphrase -o report.pdf.spipe report.pdf`,
		Args: maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			j, err := a.fileJob(&f, args)
			if err != nil {
				return err
			}
			suite, err := aead.ParseSuite(cipher)
			if err != nil {
				return usagef("--cipher: %s", err)
			}
			if chunkSize < sealed.MinChunkSize || chunkSize > sealed.MaxChunkSize || chunkSize&(chunkSize-1) != 0 {
				return usagef("--chunk-size %d: want a power of two from %d to %d", chunkSize, sealed.MinChunkSize, sealed.MaxChunkSize)
			}
			secret, err := a.secret(&f, true)
			if err != nil {
				return err
			}
			return fileExit(sealfile.Seal(j, secret, &sealed.Options{Suite: suite, ChunkSize: chunkSize, Workers: f.workers}))
		},
	}
	f.add(cmd, "seal")
	cmd.Flags().StringVar(&cipher, "cipher", sealed.DefaultSuite.String(), "`SUITE` to seal with: "+suiteNames())
	cmd.Flags().IntVar(&chunkSize, "chunk-size", sealed.DefaultChunkSize, "plaintext `BYTES` per chunk, a power of two")
	_ = cmd.RegisterFlagCompletionFunc("cipher", fixedCompletions(suiteNamesList()...))
	return cmd
}

func (a *app) openCommand() *cobra.Command {
	var f fileFlags
	var rg sealfile.Range
	var maxMemoryMiB, maxPasses uint32
	cmd := &cobra.Command{
		Use:   "open (-k FILE | --passphrase) [-o OUT] [--offset N] [--length N] [IN]",
		Short: "Check and decrypt a spipe file (or stdin), or any byte range of it",
		Long: `Open the spipe file IN (standard input if absent or -) and write its plaintext
to standard output, or to OUT with -o. Only authenticated plaintext is ever
written: a damaged, truncated, extended or reordered file stops at the first bad
chunk, which the error names. To standard output, the chunks before it have
been written by then; with -o the plaintext goes to a temporary file beside OUT,
renamed to OUT only once the whole file has opened, so a failed open leaves
nothing behind.

--offset and --length write that range of the plaintext. When IN is a file,
only the header, the final chunk (which proves the file whole) and the chunks
that cover the range are read, so the cost does not depend on the file's size;
from a pipe the whole input is read and checked.

The secret is the key file (-k) or passphrase (--passphrase, read from the
terminal) the file was sealed with.

A passphrase file's header says how costly Argon2id must be to open it, and
anyone can write a header: one at the format's limits (1 GiB, 16 passes) makes
an open spend 1 GiB of memory and 10 to 16 s before the passphrase can be found
wrong. open therefore refuses, before running Argon2id, a file that asks for
more than --max-argon2-memory (256 MiB) or --max-argon2-passes (8), at most
about 2 s on a 2-vCPU machine; "spipe seal" asks for 64 MiB and 3. Raise them
only for a file whose source you trust.`,
		Example: `  spipe open -k ~/.spipe/key dir.tar.spipe | tar x
  spipe open -k ~/.spipe/key -o backup.tar backup.spipe
  spipe open -k ~/.spipe/key --offset 1048576 --length 4096 big.spipe | xxd`,
		Args: maxArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			j, err := a.fileJob(&f, args)
			if err != nil {
				return err
			}
			if rg.Offset < 0 {
				return usagef("--offset %d: want 0 or more", rg.Offset)
			}
			if maxMemoryMiB < sealed.MinArgon2MemoryKiB>>10 || maxMemoryMiB > sealed.MaxArgon2MemoryKiB>>10 {
				return usagef("--max-argon2-memory %d: want %d to %d (MiB)", maxMemoryMiB, sealed.MinArgon2MemoryKiB>>10, sealed.MaxArgon2MemoryKiB>>10)
			}
			if maxPasses < 1 || maxPasses > sealed.MaxArgon2Time {
				return usagef("--max-argon2-passes %d: want 1 to %d", maxPasses, sealed.MaxArgon2Time)
			}
			j.Argon2Ceiling = &sealed.Argon2Params{Time: maxPasses, MemoryKiB: maxMemoryMiB << 10}
			secret, err := a.secret(&f, false)
			if err != nil {
				return err
			}
			return fileExit(sealfile.Open(j, secret, rg))
		},
	}
	f.add(cmd, "open")
	cmd.Flags().Int64Var(&rg.Offset, "offset", 0, "start at plaintext byte `N`")
	cmd.Flags().Int64Var(&rg.Length, "length", -1, "write at most `N` bytes (default: to the end)")
	cmd.Flags().Uint32Var(&maxMemoryMiB, "max-argon2-memory", sealed.DefaultArgon2Ceiling.MemoryKiB>>10,
		"refuse a passphrase file asking Argon2id for more than `MIB` of memory")
	cmd.Flags().Uint32Var(&maxPasses, "max-argon2-passes", sealed.DefaultArgon2Ceiling.Time,
		"refuse a passphrase file asking Argon2id for more than `N` passes")
	return cmd
}

// maxArgs is cobra.MaximumNArgs with a usage error.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MaximumNArgs(n)(cmd, args); err != nil {
			return usageError{fmt.Errorf("%s: %w", cmd.Name(), err)}
		}
		return nil
	}
}

// suiteNamesList is every suite's name, for completion.
func suiteNamesList() []string {
	var names []string
	for _, s := range aead.Suites() {
		names = append(names, s.String())
	}
	return names
}

// fileSections are spipe-seal(1)'s and spipe-open(1)'s sections beyond
// what their help says: the exit statuses (exit* above), one per failure a
// script must tell apart.
var fileSections = fmt.Sprintf(`.SH EXIT STATUS
.TP
.B 0
Success: the whole input was sealed, or opened and authenticated.
.TP
.B 1
Any other failure at run time: an input that cannot be read, a key file
that is missing, unreadable, empty or over 1 MiB (a key file shorter than
32 bytes loads, with a warning that it cannot hold 256 bits), no terminal
for --passphrase, a write error.
.TP
.B 2
A command line that makes no sense: an unknown flag, a bad value, both -k
and --passphrase or neither.
.TP
.B %d
Wrong key or passphrase: the file's header passes its checksum but does
not verify under the secret given (or names the other kind: a passphrase
for a key file, or the reverse). Either the file was sealed under another
secret, or its header was altered on purpose: the checksum is not keyed,
so it tells accidental damage (status %d) from a wrong secret, not an
attacker's edit from one.
.TP
.B %d
The input is not a spipe file (it does not start with the format's magic;
an empty input included).
.TP
.B %d
A spipe file of a format version this spipe does not read.
.TP
.B %d
The input is damaged: a header whose checksum fails or whose fields break
the format, a chunk that fails authentication (modified, reordered,
dropped, duplicated, from another file), a file cut short, or data after
its final chunk. These share one status on purpose: a script can only
distrust the input and fetch it again, and which of them a damaged file
shows is partly up to whoever damaged it. The message says which it is and
names the chunk and its byte offset.
.TP
.B %d
The -o file exists and --force was not given; nothing was written.
.TP
.B %d
The -o file's directory cannot be written (read-only, missing, or not
permitted); nothing was written.
.TP
.B %d
A passphrase file whose header asks Argon2id for more memory or passes than
--max-argon2-memory and --max-argon2-passes allow (256 MiB and 8 by default):
refused before Argon2id runs, so a hostile header cannot make open spend up to
1 GiB and many seconds. The file may be genuine, sealed with costlier
settings; raise the limits only if you trust its source.
`, exitWrongKey, exitDamaged, exitNotSealed, exitVersion, exitDamaged, exitOutputExist, exitNotWritable, exitKDFCeiling)
