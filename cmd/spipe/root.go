package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/spipe-dev/spipe/internal/buildinfo"
)

// Exit codes: 1 for a failure at run time (key file, address in use, a
// failed stdio connection), 2 for a command line that makes no sense.
const (
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks an error in the command line itself.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// app carries what every command shares: the standard streams and the
// logger built from the global flags.
type app struct {
	stdin          io.ReadCloser
	stdout, stderr io.WriteCloser
	logLevel       string
	logFormat      string
	log            *slog.Logger
}

// run executes the command line and returns the exit code. Errors are
// printed as one line, "spipe: <what went wrong>", on stderr.
func run(args []string, stdin io.ReadCloser, stdout, stderr io.WriteCloser) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	err := spipedMode(args)
	if err == nil {
		root := a.rootCommand()
		root.SetArgs(args)
		err = root.ExecuteContext(context.Background())
	}
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "spipe: %s\n", oneLine(err))
	// A failed stdio connection leaves the streams open until its error is
	// out (engine.Forwarder.Handle): ssh, whose ProxyCommand this is,
	// exits as soon as they close.
	stdin.Close()
	stdout.Close()
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command ") {
		return exitUsage
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailure
}

// oneLine is the text of err on one line: cobra's own errors may carry
// suggestions on lines of their own. The library's errors carry their
// package prefix, as x/crypto's do ("spipe: handshake: ..."); after the
// line's own "spipe: " it would only repeat, so it goes.
func oneLine(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	return strings.ReplaceAll(strings.TrimPrefix(msg, "spipe: "), ": spipe: ", ": ")
}

// spipedMode explains spiped's mode flags, which come before any command:
// "spiped -e" is "spipe connect", "spiped -d" is "spipe listen".
func spipedMode(args []string) error {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") {
		return nil
	}
	for _, a := range args {
		if a == "-e" || a == "-d" {
			return usagef("%s is spiped's: spiped -e is \"spipe connect\" and spiped -d is \"spipe listen\", with most of the same flags (see \"Moving from spiped\" in the README)", a)
		}
	}
	return nil
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "spipe",
		Short: "Secure pipe: encrypted, authenticated TCP and Unix-socket forwarding",
		Long: `spipe carries TCP or Unix-socket connections encrypted and authenticated
between two hosts that share a key file.

  spipe listen   accepts encrypted connections and forwards the plaintext to a target
  spipe connect  accepts plaintext (or uses stdin/stdout) and forwards it encrypted

Each connection gets fresh session keys (X25519 forward secrecy by default), the
listener dials its target only after the client proved it holds the key, and the
end of each stream is authenticated, so a cut connection is never taken for a
complete one.`,
		Example: `  spipe keygen /etc/spipe/key
  # on the server: decrypt port 8022, forward to the local sshd
  spipe listen -s '[::]:8022' -t 127.0.0.1:22 -k /etc/spipe/key
  # on the client: use it from ssh (brackets keep IPv6 hosts whole)
  ssh -o ProxyCommand='spipe connect -t [%h]:8022 -k ~/.spipe/key' server
  # compare the keys at both ends
  spipe key fingerprint /etc/spipe/key`,
		Version:           buildinfo.Version(),
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return a.setupLog() },
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	// --version and -v print what "spipe version" prints. The text is a
	// template: braces in it would be template actions, and it has none.
	root.SetVersionTemplate(versionText())
	pf := root.PersistentFlags()
	pf.StringVar(&a.logLevel, "log-level", "info", "log `LEVEL`: debug, info, warn or error")
	pf.StringVar(&a.logFormat, "log-format", "text", "log `FORMAT` on stderr: text or json")
	_ = root.RegisterFlagCompletionFunc("log-level", fixedCompletions("debug", "info", "warn", "error"))
	_ = root.RegisterFlagCompletionFunc("log-format", fixedCompletions("text", "json"))

	root.AddCommand(
		a.listenCommand(),
		a.connectCommand(),
		a.keygenCommand(),
		a.keyCommand(),
		a.sealCommand(),
		a.openCommand(),
		a.versionCommand(),
		a.benchCommand(),
		a.manCommand(),
	)
	return root
}

// setupLog builds the slog logger the global flags ask for.
func (a *app) setupLog() error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(a.logLevel)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", a.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(a.logFormat) {
	case "text":
		a.log = slog.New(slog.NewTextHandler(a.stderr, opts))
	case "json":
		a.log = slog.New(slog.NewJSONHandler(a.stderr, opts))
	default:
		return usagef("--log-format %q: want text or json", a.logFormat)
	}
	return nil
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageError{fmt.Errorf("%s: %w", cmd.Name(), err)}
		}
		return nil
	}
}

func fixedCompletions(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
