package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/spipe-dev/spipe/internal/service"
	"github.com/spipe-dev/spipe/internal/testutil/pipetest"
)

// TestBadInvocations: every mistake on the command line or in the key
// file is one line on stderr, "spipe: ...", with exit code 2 for the
// command line and 1 for the rest, and nothing starts serving. The command
// runs in this process: run is main but for os.Exit.
func TestBadInvocations(t *testing.T) {
	dir := t.TempDir()
	key := pipetest.KeyFile(t)
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	exists := filepath.Join(dir, "exists")
	require.NoError(t, os.WriteFile(exists, []byte("keep me"), 0o600))
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	notSock := filepath.Join(dir, "plain-file")
	require.NoError(t, os.WriteFile(notSock, nil, 0o600))

	tg := "127.0.0.1:9"
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown flag", []string{"listen", "--frobnicate"}, 2, "unknown flag: --frobnicate"},
		{"unknown command", []string{"lisen"}, 2, `unknown command "lisen" for "spipe" Did you mean this? listen`},
		{"listen no source", []string{"listen", "-t", tg, "-k", key}, 2, "-s/--source is required"},
		{"listen no target", []string{"listen", "-s", "127.0.0.1:0", "-k", key}, 2, "-t/--target is required"},
		{"listen no key", []string{"listen", "-s", "127.0.0.1:0", "-t", tg}, 2, "-k/--key is required"},
		{"connect no target", []string{"connect", "-k", key}, 2, "-t/--target is required"},
		{"connect two keys", []string{"connect", "-t", tg, "-k", key, "-k", key}, 2, "connect takes one key"},
		{"stray argument", []string{"listen", "extra", "-s", ":0", "-t", tg, "-k", key}, 2, "accepts 0 arg(s), received 1"},
		{"address without port", []string{"listen", "-s", "localhost", "-t", tg, "-k", key}, 2, `-s/--source: address "localhost": want host:port`},
		{"v6 without brackets", []string{"listen", "-s", "::1:80", "-t", tg, "-k", key}, 2, `-s/--source: address "::1:80"`},
		{"relative socket", []string{"listen", "-s", "run/x.sock", "-t", tg, "-k", key}, 2, "Unix-socket paths must be absolute"},
		{"bad port", []string{"listen", "-s", ":0", "-t", "127.0.0.1:70000", "-k", key}, 2, `port "70000" is not a number from 0 to 65535`},
		{"target port 0", []string{"listen", "-s", ":0", "-t", "127.0.0.1:0", "-k", key}, 2, "port 0 cannot be dialled"},
		{"bad bind", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "-b", "example.com"}, 2, `-b/--bind: source address "example.com"`},
		{"bad cipher", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--cipher", "rot13"}, 2, `--cipher: unknown suite "rot13"; valid names (aliases in parentheses): chacha20-poly1305 (chacha20);`},
		{"pfs contradiction", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--no-pfs", "--require-pfs"}, 2, "--no-pfs and --require-pfs contradict each other"},
		{"negative max conns", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--max-conns", "-1"}, 2, "--max-conns -1: want 0 (no limit) or more"},
		{"max conns not a number", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--max-conns", "many"}, 2, `invalid argument "many" for "-n, --max-conns"`},
		{"negative max pending", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--max-pending", "-1"}, 2, "--max-pending -1: must not be negative"},
		{"max pending on connect", []string{"connect", "-t", tg, "-k", key, "--max-pending", "5"}, 2, "unknown flag: --max-pending"},
		{"negative max pending per source", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--max-pending-per-source", "-1"}, 2, "--max-pending-per-source -1: must not be negative"},
		{"max pending per source on connect", []string{"connect", "-t", tg, "-k", key, "--max-pending-per-source", "5"}, 2, "unknown flag: --max-pending-per-source"},
		{"accept proxy from not a network", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--accept-proxy-from", "lb.example"}, 2,
			`--accept-proxy-from: "lb.example": want a network such as 10.0.0.0/24 or 2001:db8::/64, or one address`},
		{"accept proxy from host bits", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--accept-proxy-from", "10.0.0.0/8,10.1.2.3/16"}, 2,
			`--accept-proxy-from: "10.1.2.3/16" has bits set past the /16: did you mean 10.1.0.0/16 or 10.1.2.3/32?`},
		{"accept proxy from mapped", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--accept-proxy-from", "::ffff:10.0.0.0/104"}, 2,
			`--accept-proxy-from: "::ffff:10.0.0.0/104": write IPv4 networks in IPv4 notation, such as 10.0.0.0/24`},
		{"accept proxy from on connect", []string{"connect", "-t", tg, "-k", key, "--accept-proxy-from", "10.0.0.0/8"}, 2, "unknown flag: --accept-proxy-from"},
		{"handshake timeout 0", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--handshake-timeout", "0s"}, 2, "--handshake-timeout 0s: must be positive"},
		{"bad duration", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--idle-timeout", "soon"}, 2, `invalid argument "soon" for "--idle-timeout"`},
		{"negative idle", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--idle-timeout", "-1s"}, 2, "--idle-timeout -1s: must not be negative"},
		{"bad socket mode", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--socket-mode", "999"}, 2, `--socket-mode "999"`},
		{"bad pad", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--pad", "-5"}, 2, "--pad -5: want 0 to 65536"},
		{"bad log level", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--log-level", "loud"}, 2, `--log-level "loud": want debug, info, warn or error`},
		{"bad log format", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "--log-format", "xml"}, 2, `--log-format "xml": want text or json`},
		{"stdin key without -s", []string{"connect", "-t", tg, "-k", "-"}, 2, "-k - needs -s: without -s, standard input carries the connection"},
		{"missing key file", []string{"listen", "-s", ":0", "-t", tg, "-k", filepath.Join(dir, "nope")}, 1, "key file " + filepath.Join(dir, "nope") + ": no such file"},
		{"key file is a directory", []string{"listen", "-s", ":0", "-t", tg, "-k", dir}, 1, "key file " + dir + ": is a directory"},
		{"key file empty", []string{"listen", "-s", ":0", "-t", tg, "-k", empty}, 1, "key file " + empty + " is empty (make a key with: spipe keygen FILE)"},
		{"second key file missing", []string{"listen", "-s", ":0", "-t", tg, "-k", key, "-k", filepath.Join(dir, "gone")}, 1, "key file " + filepath.Join(dir, "gone") + ": no such file"},
		{"key on stdin empty", []string{"listen", "-s", ":0", "-t", tg, "-k", "-"}, 1, "key on standard input is empty"},
		{"address in use", []string{"listen", "-s", busy.Addr().String(), "-t", tg, "-k", key}, 1, "listen on " + busy.Addr().String() + ": address already in use"},
		{"metrics address in use", []string{"listen", "-s", "127.0.0.1:0", "-t", tg, "-k", key, "--metrics", busy.Addr().String()}, 1, "metrics: listen on " + busy.Addr().String() + ": address already in use"},
		{"bad metrics address", []string{"listen", "-s", "127.0.0.1:0", "-t", tg, "-k", key, "--metrics", "9100"}, 2, `--metrics "9100": want host:port`},
		{"socket path not a socket", []string{"listen", "-s", notSock, "-t", tg, "-k", key}, 1, "listen on " + notSock + ": file exists and is not a socket"},
		{"unwritable pidfile", []string{"listen", "-s", "127.0.0.1:0", "-t", tg, "-k", key, "--pidfile", filepath.Join(dir, "no", "such", "dir", "pid")}, 1, "pidfile " + filepath.Join(dir, "no", "such", "dir", "pid")},
		{"keygen exists", []string{"keygen", exists}, 1, "key file " + exists + " exists (use --force to overwrite it)"},
		{"keygen no file", []string{"keygen"}, 2, "keygen: accepts 1 arg(s), received 0"},
		{"bench bad size", []string{"bench", "--size", "1"}, 2, "--size 1: want 64 to"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := invoke("", tc.args...) // an empty stdin for -k -
			assert.Equal(t, tc.code, code, "stderr %q", stderr)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			assert.Len(t, lines, 1, "want one line on stderr, got %q", stderr)
			assert.True(t, strings.HasPrefix(lines[0], "spipe: "), "%q", lines[0])
			assert.Contains(t, lines[0], tc.msg)
			assert.NotContains(t, stderr, "msg=serving")
			assert.Empty(t, stdout)
		})
	}
	b, err := os.ReadFile(exists)
	require.NoError(t, err)
	assert.Equal(t, "keep me", string(b), "keygen overwrote a file without --force")
}

func TestKeygen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	code, out, errs := invoke("", "keygen", path)
	require.Zero(t, code, "%s%s", out, errs)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	first, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}\n$`, string(first))

	code, out, errs = invoke("", "keygen", "--force", path)
	require.Zero(t, code, "%s%s", out, errs)
	second, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}\n$`, string(second))
	assert.NotEqual(t, first, second, "--force wrote the same key again")
}

func TestVersion(t *testing.T) {
	code, out, _ := invoke("", "version")
	require.Zero(t, code)
	assert.Regexp(t, `(?m)^spipe \S+\nrevision (unknown|[0-9a-f]{40}(\+modified)?)\ngo go1\.\S+ \w+/\w+\nchacha20 kernel: (avx512|avx2|ssse3|generic)\nsalsa20 kernel: (avx512|avx2|ssse3|generic)\npoly1305 kernel: (avx512ifma|avx2|scalar|generic)\n$`, out)
}

func TestBench(t *testing.T) {
	code, stdout, stderr := invoke("", "bench", "--time", "5ms", "--size", "4096")
	require.Zero(t, code, stderr)
	assert.Contains(t, stderr, "\rbench  1/", "no progress line")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Greater(t, len(lines), 6)
	assert.Regexp(t, `^CIPHER\s+MEASURE\s+KERNEL\s+MB/s$`, lines[0])
	for _, want := range []string{"chacha20", "chacha8", "salsa20", "chacha20-poly1305", "xsalsa20-poly1305", "xchacha20-poly1305"} {
		assert.Regexp(t, `(?m)^`+regexpQuote(want)+`\s+(keystream|aead seal)\s+\w+\s+[1-9]\d*$`, stdout)
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, sub := range []string{"listen", "connect", "keygen", "version", "bench"} {
		code, out, _ := invoke("", sub, "--help")
		require.Zero(t, code, sub)
		assert.Contains(t, out, "Examples:", sub)
	}
}

func TestCompletion(t *testing.T) {
	code, out, _ := invoke("", "completion", "bash")
	require.Zero(t, code)
	assert.Contains(t, out, "__start_spipe")
}

func TestManPages(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := invoke("", "man", dir)
	require.Zero(t, code, "%s%s", out, errs)
	// Every page has its own name in its header.
	for file, title := range map[string]string{
		"spipe.1": "SPIPE", "spipe-listen.1": "SPIPE-LISTEN", "spipe-connect.1": "SPIPE-CONNECT",
		"spipe-keygen.1": "SPIPE-KEYGEN", "spipe-key-fingerprint.1": "SPIPE-KEY-FINGERPRINT",
	} {
		page, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err, file)
		assert.Contains(t, string(page), `.TH "`+title+`" "1"`, file)
	}
	page, err := os.ReadFile(filepath.Join(dir, "spipe-listen.1"))
	require.NoError(t, err)
	assert.Contains(t, string(page), "--handshake-timeout")
	// spipe(1) has the sections a manual page of a daemon needs, in
	// order, before SEE ALSO.
	root, err := os.ReadFile(filepath.Join(dir, "spipe.1"))
	require.NoError(t, err)
	last := 0
	for _, section := range []string{".SH DESCRIPTION", ".SH EXIT STATUS", ".SH SIGNALS", ".SH FILES", ".SH KEY FORMAT", ".SH SEE ALSO"} {
		at := strings.Index(string(root), "\n"+section+"\n")
		if assert.Greater(t, at, last, "%s missing or out of order", section) {
			last = at
		}
	}
	assert.Contains(t, string(root), "SHA-256 of the key file's whole content")
}

func regexpQuote(s string) string {
	return strings.NewReplacer(".", `\.`, "-", `\-`, "/", `\/`).Replace(s)
}

// TestAcceptProxyFromFlag: networks repeat or come comma-separated, and a
// bare address is a network of one.
func TestAcceptProxyFromFlag(t *testing.T) {
	var p pipeFlags
	fs := pflag.NewFlagSet("listen", pflag.ContinueOnError)
	p.register(fs, service.Listen)
	require.NoError(t, fs.Parse([]string{"-s", ":8022", "-t", "127.0.0.1:22", "-k", "/k",
		"--accept-proxy-from", "10.0.0.0/24, 192.0.2.7", "--accept-proxy-from", "2001:db8::/64"}))
	o, err := p.options(service.Listen)
	require.NoError(t, err)
	assert.Equal(t, "[10.0.0.0/24 192.0.2.7/32 2001:db8::/64]", fmt.Sprint(o.AcceptProxyFrom))
}
