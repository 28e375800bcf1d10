package main

import (
	"bytes"
	"crypto/rand"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/spipe-dev/spipe/internal/testutil"
)

// sealFixture is a key, a plaintext of a few chunks and its sealed file.
type sealFixture struct {
	dir, key, plain, sealed string
	pt                      []byte
}

func newSealFixture(t *testing.T) *sealFixture {
	t.Helper()
	f := &sealFixture{dir: t.TempDir()}
	f.key = filepath.Join(f.dir, "key")
	code, _, stderr := invoke("", "keygen", f.key)
	require.Equal(t, 0, code, stderr)
	f.pt = make([]byte, 600_000) // three chunks of 256 KiB, the last short
	rand.Read(f.pt)
	f.plain = filepath.Join(f.dir, "plain")
	require.NoError(t, os.WriteFile(f.plain, f.pt, 0o600))
	f.sealed = filepath.Join(f.dir, "plain.spipe")
	code, _, stderr = invoke("", "seal", "-k", f.key, "-o", f.sealed, f.plain)
	require.Equal(t, 0, code, stderr)
	return f
}

// TestSealOpenRoundTrip: files and standard streams, ranges, workers.
func TestSealOpenRoundTrip(t *testing.T) {
	f := newSealFixture(t)
	code, out, stderr := invoke("", "open", "-k", f.key, f.sealed)
	require.Equal(t, 0, code, stderr)
	assert.True(t, bytes.Equal(f.pt, []byte(out)))
	assert.Empty(t, stderr, "a successful open says nothing")

	// Standard input to standard output, one worker.
	code, sealedOut, stderr := invoke(string(f.pt), "seal", "-j", "1", "-k", f.key)
	require.Equal(t, 0, code, stderr)
	code, out, stderr = invoke(sealedOut, "open", "-j", "3", "-k", f.key)
	require.Equal(t, 0, code, stderr)
	assert.True(t, bytes.Equal(f.pt, []byte(out)))

	// Ranges, from a file (random access) and from a pipe (streamed).
	for _, rg := range [][2]int{{0, 10}, {262140, 10}, {599_990, 100}, {300_000, 0}, {600_000, 5}} {
		args := []string{"open", "-k", f.key, "--offset", strconv.Itoa(rg[0]), "--length", strconv.Itoa(rg[1])}
		code, out, stderr = invoke("", append(args, f.sealed)...)
		require.Equal(t, 0, code, stderr)
		want := f.pt[rg[0]:min(rg[0]+rg[1], len(f.pt))]
		assert.Equal(t, want, []byte(out), "range %v from a file", rg)
		code, out, stderr = invoke(sealedOut, args...)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, want, []byte(out), "range %v from a pipe", rg)
	}
	// Standard input that is a file, already read into: sealed from where
	// its offset stands, as a stream would be.
	in, err := os.Open(f.plain)
	require.NoError(t, err)
	defer in.Close()
	_, err = in.Seek(1000, io.SeekStart)
	require.NoError(t, err)
	cmd := command("seal", "-k", f.key)
	cmd.Stdin = in
	sealedRest, err := cmd.Output()
	require.NoError(t, err)
	code, out, stderr = invoke(string(sealedRest), "open", "-k", f.key)
	require.Equal(t, 0, code, stderr)
	assert.True(t, bytes.Equal(f.pt[1000:], []byte(out)), "stdin at an offset")

	code, _, stderr = invoke("", "open", "-k", f.key, "--offset", "600001", f.sealed)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "beyond the plaintext's end")
}

// TestOpenExitStatuses: each failure spipe-open(1) lists gets its own
// exit status and one line, and a failed -o leaves nothing behind.
func TestOpenExitStatuses(t *testing.T) {
	f := newSealFixture(t)
	file, err := os.ReadFile(f.sealed)
	require.NoError(t, err)
	write := func(name string, b []byte) string {
		p := filepath.Join(f.dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
	other := filepath.Join(f.dir, "other-key")
	code, _, _ := invoke("", "keygen", other)
	require.Equal(t, 0, code)
	flipped := bytes.Clone(file)
	flipped[len(flipped)-100] ^= 1
	v2 := bytes.Clone(file)
	v2[8] = 2
	badHeader := bytes.Clone(file)
	badHeader[30] ^= 1
	cases := []struct {
		name, key, in string
		code          int
		msg           string
	}{
		{"wrong key", other, f.sealed, exitWrongKey, "wrong key"},
		{"not a spipe file", f.key, f.plain, exitNotSealed, "not a spipe sealed file"},
		{"unsupported version", f.key, write("v2", v2), exitVersion, "unsupported spipe file version 2"},
		{"damaged header", f.key, write("hdr", badHeader), exitDamaged, "damaged header"},
		{"tampered chunk", f.key, write("flipped", flipped), exitDamaged, "chunk 2 (at byte"},
		{"truncated", f.key, write("cut", file[:96+262144+16]), exitDamaged, "chunk 0"},
		{"appended", f.key, write("appended", append(bytes.Clone(file), 'x')), exitDamaged, "chunk 2"},
	}
	for _, c := range cases {
		out := filepath.Join(f.dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
		code, stdout, stderr := invoke("", "open", "-k", c.key, "-o", out, c.in)
		assert.Equal(t, c.code, code, "%s: %s", c.name, stderr)
		assert.Contains(t, stderr, c.msg, c.name)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "%s: one line: %q", c.name, stderr)
		assert.Empty(t, stdout, c.name)
		assert.NoFileExists(t, out, c.name)
	}
	entries, err := os.ReadDir(f.dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.Contains(e.Name(), ".spipe-"), "temporary file %s left behind", e.Name())
	}

	// The output exists: refused without --force, replaced with it.
	existing := write("existing", []byte("keep me"))
	code, _, stderr := invoke("", "open", "-k", f.key, "-o", existing, f.sealed)
	assert.Equal(t, exitOutputExist, code, stderr)
	kept, _ := os.ReadFile(existing)
	assert.Equal(t, "keep me", string(kept))
	code, _, stderr = invoke("", "open", "-k", f.key, "--force", "-o", existing, f.sealed)
	assert.Equal(t, 0, code, stderr)
	replaced, _ := os.ReadFile(existing)
	assert.True(t, bytes.Equal(f.pt, replaced))

	// A destination that cannot be written, even by root: /proc.
	code, _, stderr = invoke("", "open", "-k", f.key, "-o", "/proc/spipe-test-out", f.sealed)
	assert.Equal(t, exitNotWritable, code, stderr)
	code, _, stderr = invoke("", "seal", "-k", f.key, "-o", "/proc/spipe-test-out", f.plain)
	assert.Equal(t, exitNotWritable, code, stderr)

	// A device is written in place, never replaced by a file.
	code, _, stderr = invoke("", "open", "-k", f.key, "-o", os.DevNull, f.sealed)
	assert.Equal(t, 0, code, stderr)
	fi, err := os.Stat(os.DevNull)
	require.NoError(t, err)
	assert.Equal(t, os.ModeDevice|os.ModeCharDevice, fi.Mode()&(os.ModeDevice|os.ModeCharDevice), "/dev/null is no longer a device")

	// Usage errors.
	code, _, _ = invoke("", "open", f.sealed)
	assert.Equal(t, exitUsage, code)
	code, _, _ = invoke("", "open", "-k", f.key, "--passphrase", f.sealed)
	assert.Equal(t, exitUsage, code)
	code, _, _ = invoke("", "seal", "-k", f.key, "--chunk-size", "1000", f.plain)
	assert.Equal(t, exitUsage, code)
	// Key files follow the pipe's rule (FILE.md 1.1): 1 byte to 1 MiB,
	// shorter than 32 bytes with a warning; empty or larger is exit 1.
	short := write("short-key", []byte("k"))
	code, _, stderr = invoke("", "seal", "-k", short, "-o", filepath.Join(f.dir, "short.spipe"), f.plain)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "fewer than 32 bytes")
	code, _, stderr = invoke("", "open", "-k", short, "-o", os.DevNull, filepath.Join(f.dir, "short.spipe"))
	assert.Equal(t, 0, code, stderr)
	for _, bad := range []string{write("empty-key", nil), write("big-key", make([]byte, 1<<20+1))} {
		code, _, stderr = invoke("", "open", "-k", bad, f.sealed)
		assert.Equal(t, exitFailure, code, stderr)
	}
	for _, flag := range []string{"--max-argon2-memory=2048", "--max-argon2-memory=7", "--max-argon2-passes=0", "--max-argon2-passes=17"} {
		code, _, stderr = invoke("", "open", "-k", f.key, flag, f.sealed)
		assert.Equal(t, exitUsage, code, flag)
		assert.Contains(t, stderr, strings.SplitN(flag, "=", 2)[0], flag)
	}
}

// TestPassphraseOnTerminal seals and opens with --passphrase typed on a
// real pseudo-terminal, the process's controlling terminal, while the data
// goes through files; a wrong passphrase is exit 10.
func TestPassphraseOnTerminal(t *testing.T) {
	f := newSealFixture(t)
	sealedPath := filepath.Join(f.dir, "pass.spipe")
	runTTY(t, []string{"seal", "--passphrase", "-o", sealedPath, f.plain}, nil,
		[]string{"Passphrase: ", "tr0ub4dor&3\n", "Passphrase again: ", "tr0ub4dor&3\n"}, 0)
	var out bytes.Buffer
	runTTY(t, []string{"open", "--passphrase", sealedPath}, &out,
		[]string{"Passphrase: ", "tr0ub4dor&3\n"}, 0)
	assert.True(t, bytes.Equal(f.pt, out.Bytes()))
	runTTY(t, []string{"open", "--passphrase", sealedPath}, io.Discard,
		[]string{"Passphrase: ", "Tr0ub4dor&3\n"}, exitWrongKey)
	// A ceiling below what the file asks (seal's 64 MiB, 3 passes): exit
	// 16 before Argon2id runs, naming the flags that raise it.
	for _, flag := range []string{"--max-argon2-memory=32", "--max-argon2-passes=2"} {
		stderr := runTTY(t, []string{"open", "--passphrase", flag, sealedPath}, io.Discard,
			[]string{"Passphrase: ", "tr0ub4dor&3\n"}, exitKDFCeiling)
		assert.Contains(t, stderr, "asks for 64 MiB, 3 passes, 4 lanes", flag)
		assert.Contains(t, stderr, "raise --max-argon2-memory or --max-argon2-passes", flag)
	}
	runTTY(t, []string{"open", "--passphrase", "--max-argon2-memory=64", "--max-argon2-passes=3", "-o", os.DevNull, sealedPath},
		nil, []string{"Passphrase: ", "tr0ub4dor&3\n"}, 0)
	// Mismatched confirmation: nothing is written.
	mismatch := filepath.Join(f.dir, "mismatch.spipe")
	runTTY(t, []string{"seal", "--passphrase", "-o", mismatch, f.plain}, nil,
		[]string{"Passphrase: ", "one\n", "Passphrase again: ", "two\n"}, exitFailure)
	assert.NoFileExists(t, mismatch)
	// A key file where a passphrase file is: exit 10, naming the fix.
	code, _, stderr := invoke("", "open", "-k", f.key, sealedPath)
	assert.Equal(t, exitWrongKey, code)
	assert.Contains(t, stderr, "sealed with a passphrase")
}

// runTTY runs spipe with a new pseudo-terminal as its controlling
// terminal (stdin from /dev/null, stdout to out), playing script: a
// prompt to wait for, then what to type, in turn. It requires the exit
// status want, and returns what it wrote to stderr.
func runTTY(t *testing.T, args []string, out io.Writer, script []string, want int) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close()
	cmd := command(args...)
	cmd.Stdout = out
	stderr := &testutil.Log{} // read while the child writes
	cmd.Stderr = stderr
	cmd.ExtraFiles = []*os.File{tty} // fd 3 in the child
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	require.NoError(t, cmd.Start())
	tty.Close()
	seen := make(chan string, 100)
	go func() {
		buf := make([]byte, 256)
		var acc string
		for {
			n, err := ptmx.Read(buf)
			acc += string(buf[:n])
			seen <- acc
			if err != nil {
				close(seen)
				return
			}
		}
	}()
	var screen string
	for i := 0; i < len(script); i += 2 {
		deadline := time.After(30 * time.Second)
		for !strings.HasSuffix(strings.TrimSpace(screen), strings.TrimSpace(script[i])) {
			select {
			case s, ok := <-seen:
				require.True(t, ok, "terminal closed before %q; screen %q; stderr %q", script[i], screen, stderr.String())
				screen = s
			case <-deadline:
				t.Fatalf("no %q on the terminal; screen %q", script[i], screen)
			}
		}
		// Type only once the program reads with echo off, as a person
		// answering the prompt would: typed ahead, the terminal itself
		// would echo it (every ReadPassword does the same).
		waitEchoOff(t, ptmx)
		_, err := ptmx.Write([]byte(script[i+1]))
		require.NoError(t, err)
		screen = ""
	}
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	require.Equal(t, want, code, "stderr: %s", stderr.String())
	transcript := screen
	for s := range seen { // the child is gone: the reader ends
		transcript = s
	}
	assert.Contains(t, transcript, "Passphrase: ")
	assert.NotContains(t, strings.ToLower(transcript), "tr0ub4dor", "the passphrase was echoed")
	return stderr.String()
}

// waitEchoOff waits until the terminal's echo is off (the master reports
// the terminal's settings).
func waitEchoOff(t *testing.T, ptmx *os.File) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		tio, err := unix.IoctlGetTermios(int(ptmx.Fd()), unix.TCGETS)
		require.NoError(t, err)
		if tio.Lflag&unix.ECHO == 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "echo never went off")
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPassphraseWithoutTerminal: no controlling terminal is one clear line
// and exit 1, not a hang reading standard input.
func TestPassphraseWithoutTerminal(t *testing.T) {
	f := newSealFixture(t)
	cmd := command("seal", "--passphrase", f.plain)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // a new session has no terminal
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, exitFailure, ee.ExitCode())
	assert.Contains(t, stderr.String(), "--passphrase reads the passphrase from a terminal")
}
