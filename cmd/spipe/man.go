package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/spipe-dev/spipe/internal/buildinfo"
)

// manCommand writes the man pages; "make man" runs it. Hidden because
// users read the pages, they do not make them.
func (a *app) manCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write man pages for spipe and its commands to DIR",
		Hidden: true,
		Args:   exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // keep the pages reproducible
			// No Title: each page gets its own name (SPIPE-LISTEN, ...).
			hdr := &doc.GenManHeader{Section: "1", Source: "spipe " + buildinfo.Version(), Manual: "spipe manual"}
			if err := doc.GenManTree(root, hdr, dir); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			for _, page := range []string{"spipe-seal.1", "spipe-open.1"} {
				if err := addSections(filepath.Join(dir, page), fileSections); err != nil {
					return err
				}
			}
			return addSections(filepath.Join(dir, "spipe.1"), spipeSections)
		},
	}
}

// addSections puts roff sections into a generated page before its SEE
// ALSO (cobra writes NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXAMPLE, SEE
// ALSO; a manual page's other sections go between the last two).
func addSections(path, sections string) error {
	page, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	at := bytes.Index(page, []byte(".SH SEE ALSO"))
	if at < 0 {
		at = len(page)
	}
	out := append(append(append([]byte{}, page[:at]...), sections...), page[at:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

// spipeSections are spipe(1)'s sections beyond what the commands' help
// says.
const spipeSections = `.SH EXIT STATUS
.TP
.B 0
Success; for listen and connect -s, a shutdown on SIGINT or SIGTERM.
.TP
.B 1
A failure at run time: a key file missing, unreadable or empty, an
address in use, a PID file held by another instance, or a connect over
standard input and output (no -s) whose connection failed.
.TP
.B 2
A command line that makes no sense: an unknown flag or command, a missing
or malformed value, contradictory flags; or one of spiped's flags that
spipe has no use for (-D, -r, -R, -u, --syslog), with the spipe way named.
.SH SIGNALS
.TP
.B SIGINT, SIGTERM
Stop accepting, give open connections --shutdown-timeout to finish, close
the rest and exit 0. With --metrics, /healthz answers 503 at once and new
connections are still accepted for --drain-delay (2 s) before accepting
stops, so that a load balancer probing it sends them elsewhere first. A
second SIGINT or SIGTERM stops at once: no drain, and open connections
are closed.
.TP
.B SIGHUP
Re-read the key files: new connections use the new keys, open ones keep
theirs. If a file cannot be read the old keys stay in use and the log names
the file. A connect over standard input and output ignores SIGHUP (ssh sends
it to its ProxyCommand as it exits).
.SH FILES
.TP
.I key files (-k)
Any file that is not empty, as with spiped; spipe keygen writes 32 random
bytes as 64 hex digits and a newline, mode 0600. A file that does not look
like that (shorter than 32 bytes, a passphrase) loads with a warning: it is
a weak key. They must not be readable by others (spipe warns once per
file).
.TP
.I PID file (--pidfile)
Holds the process ID and a lock while spipe runs; removed on exit.
.TP
.I contrib/systemd/
Hardened systemd units for listen and connect, and socket-activated
variants (-s systemd:NAME); make install installs them.
.TP
.I contrib/haproxy/
HAProxy in front of two listeners: PROXY v2 headers read with
--accept-proxy-from, health checks on GET /healthz at each listener's
--metrics address (200 while it accepts, 503 once it is stopping).
.SH KEY FORMAT
The key is the SHA-256 of the key file's whole content, byte for byte, as
spiped derives it: a trailing newline is part of the key, so a file copied
with a newline added or lost is another key. The same key files work with
spiped, but spipe does not speak spiped's protocol: both ends must be spipe.
.B spipe key fingerprint FILE
prints a fingerprint that identifies the key without revealing it; listen
and connect log the fingerprint of every key they load and of the key each
connection used. Compare the fingerprints at both ends when a connection is
refused.
`
