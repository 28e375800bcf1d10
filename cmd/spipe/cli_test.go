package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
	"github.com/spipe-dev/spipe/pkg/aead"
	"github.com/spipe-dev/spipe/pkg/spipe"
)

// TestVersionFlags: --version and -v print what "spipe version" prints.
func TestVersionFlags(t *testing.T) {
	_, want, _ := invoke("", "version")
	for _, flag := range []string{"--version", "-v"} {
		code, out, errs := invoke("", flag)
		assert.Zero(t, code, errs)
		assert.Equal(t, want, out, flag)
	}
}

// TestKeygenPrintsFingerprint: keygen names the key it wrote by the
// fingerprint "spipe key fingerprint" prints for the file.
func TestKeygenPrintsFingerprint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fresh", "key")
	code, out, errs := invoke("", "keygen", path)
	require.Zero(t, code, errs)
	assert.Regexp(t, `^[0-9a-f]{16}  `+regexp.QuoteMeta(path)+`\n$`, out)
	assert.Empty(t, errs)
	code, fp, errs := invoke("", "key", "fingerprint", path)
	require.Zero(t, code, errs)
	assert.Equal(t, out, fp)
	fi, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the missing directory")
}

// TestKeygenToStdout: "keygen -" writes the key to stdout (not a file
// named -) and its fingerprint line to stderr.
func TestKeygenToStdout(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, errs := invoke("", "keygen", "-")
	require.Zero(t, code, errs)
	assert.Regexp(t, `^[0-9a-f]{64}\n$`, out)
	assert.NoFileExists(t, "-")
	k, err := spipe.NewKey([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, k.Fingerprint()+"  -\n", errs)
	// And "key fingerprint -" reads the same key back from stdin.
	code, fp, errs := invoke(out, "key", "fingerprint", "-")
	require.Zero(t, code, errs)
	assert.Equal(t, k.Fingerprint()+"  -\n", fp)
}

// TestKeyFingerprint: one line per file, the same for the same bytes,
// another for a file that differs only by its trailing newline.
func TestKeyFingerprint(t *testing.T) {
	a := pipetest.KeyFile(t)
	b, err := os.ReadFile(a)
	require.NoError(t, err)
	dir := t.TempDir()
	copied, trimmed := filepath.Join(dir, "copied"), filepath.Join(dir, "trimmed")
	require.NoError(t, os.WriteFile(copied, b, 0o600))
	require.NoError(t, os.WriteFile(trimmed, []byte(strings.TrimSuffix(string(b), "\n")), 0o600))
	code, out, errs := invoke("", "key", "fingerprint", a, copied, trimmed)
	require.Zero(t, code, errs)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3)
	fp := func(line string) string { return strings.Fields(line)[0] }
	assert.Equal(t, fp(lines[0]), fp(lines[1]))
	assert.NotEqual(t, fp(lines[0]), fp(lines[2]), "a lost newline is another key")
	assert.True(t, strings.HasSuffix(lines[2], "  "+trimmed))

	code, _, errs = invoke("", "key", "fingerprint", filepath.Join(dir, "nope"))
	assert.Equal(t, exitFailure, code)
	assert.Equal(t, "spipe: key file "+filepath.Join(dir, "nope")+": no such file\n", errs)
	code, _, errs = invoke("", "key", "fingerprint")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errs, "requires at least 1 arg(s)")
	code, _, errs = invoke("", "key", "fingerprnt", a)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "spipe: unknown command \"fingerprnt\" for \"spipe key\" (try: spipe key fingerprint FILE)\n", errs)
	code, out, _ = invoke("", "key")
	assert.Zero(t, code)
	assert.Contains(t, out, "fingerprint")
}

// TestCipherNames: --help and the error for a bad --cipher list every
// suite by the names --cipher accepts.
func TestCipherNames(t *testing.T) {
	_, help, _ := invoke("", "listen", "--help")
	code, _, errs := invoke("", "connect", "-t", "127.0.0.1:9", "-k", "/k", "--cipher", "aes128-gcm")
	assert.Equal(t, exitUsage, code)
	for _, s := range aead.Suites() {
		assert.Contains(t, help, s.String())
		assert.Contains(t, errs, s.String())
		// Each name listed is one --cipher takes.
		_, err := parseCipher(s.String())
		assert.NoError(t, err, s)
	}
	assert.Contains(t, errs, `spipe: --cipher: unknown suite "aes128-gcm"; valid names (aliases in parentheses): chacha20-poly1305 (chacha20); `)
}

// TestSpipedFlags: spiped's common flags work as aliases, or fail naming
// the equivalent.
func TestSpipedFlags(t *testing.T) {
	key := pipetest.KeyFile(t)
	parse := func(mode service.Mode, args ...string) service.Options {
		t.Helper()
		var p pipeFlags
		fs := pflag.NewFlagSet(mode.String(), pflag.ContinueOnError)
		p.register(fs, mode)
		require.NoError(t, fs.Parse(args))
		opts, err := p.options(mode)
		require.NoError(t, err)
		return opts
	}
	opts := parse(service.Listen, "-s", ":0", "-t", "127.0.0.1:22", "-k", key,
		"-f", "-n", "0", "-o", "2.5", "-j", "-p", "/run/x.pid", "-F")
	assert.True(t, opts.DisableForwardSecrecy, "-f")
	assert.Zero(t, opts.MaxConns, "-n 0: no limit")
	assert.Equal(t, "2.5s", opts.HandshakeTimeout.String(), "-o: a bare number is seconds")
	assert.True(t, opts.NoKeepAlive, "-j")
	assert.Equal(t, "/run/x.pid", opts.PidFile, "-p")
	opts = parse(service.Connect, "-t", "127.0.0.1:22", "-k", key, "-g", "-o", "7s")
	assert.True(t, opts.RequireForwardSecrecy, "-g")
	assert.Equal(t, "7s", opts.HandshakeTimeout.String())

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"listen", "-s", ":0", "-t", "127.0.0.1:22", "-k", key, "-D"}, "spipe: -D: spipe does not daemonize; run it in the foreground under systemd"},
		{[]string{"connect", "-s", ":0", "-t", "127.0.0.1:22", "-k", key, "-r", "60"}, "spipe: -r: spipe resolves the target again for every connection, so there is no interval to set; drop -r"},
		{[]string{"listen", "-s", ":0", "-t", "127.0.0.1:22", "-k", key, "-R"}, "spipe: -R: spipe resolves the target for every connection; to keep one address, give -t an IP address"},
		{[]string{"listen", "-s", ":0", "-t", "127.0.0.1:22", "-k", key, "-u", "spiped:spiped"}, "spipe: -u: spipe does not change its user; start it as the user it should run as (User= or DynamicUser="},
		{[]string{"connect", "-s", ":0", "-t", "127.0.0.1:22", "-k", key, "--syslog"}, "spipe: --syslog: spipe logs to stderr, which journald collects under systemd; for another collector, --log-format json"},
		{[]string{"listen", "-s", ":0", "-t", "127.0.0.1:22", "-k", key, "-F", "-o", "5", "-u", "nobody", "-r", "30"}, "spipe: -r: "},
		{[]string{"-d", "-s", ":0", "-t", "127.0.0.1:22", "-k", key}, `spipe: -d is spiped's: spiped -e is "spipe connect" and spiped -d is "spipe listen"`},
		{[]string{"-e", "-s", ":0", "-t", "127.0.0.1:22", "-k", key}, `spipe: -e is spiped's`},
		{[]string{"listen", "-s", ":0", "-t", "127.0.0.1:22", "-k", key, "-o", "soon"}, `invalid argument "soon" for "-o, --handshake-timeout" flag: want a duration such as 10s, or a number of seconds`},
	} {
		code, _, errs := invoke("", tc.args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Contains(t, errs, tc.msg, tc.args)
	}
	// The hidden ones stay out of the help.
	for _, cmd := range []string{"listen", "connect"} {
		_, help, _ := invoke("", cmd, "--help")
		for _, f := range []string{"foreground", "refused", "daemonize", "resolve-every", "no-resolve", "--user", "syslog"} {
			assert.NotContains(t, help, f, cmd)
		}
	}
}

// TestIPv6SafeExamples: the ProxyCommand examples bracket %h.
func TestIPv6SafeExamples(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"connect", "--help"}} {
		_, help, _ := invoke("", args...)
		assert.Contains(t, help, "-t [%h]:8022", args)
		assert.NotContains(t, help, "-t %h:", args)
	}
}
