package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/spipe-dev/spipe/internal/keyring"
)

func (a *app) keyCommand() *cobra.Command {
	key := &cobra.Command{
		Use:   "key",
		Short: "Inspect key files",
		// Runnable only to refuse what is not a subcommand: cobra would
		// print the help and exit 0.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usagef("unknown command %q for \"spipe key\" (try: spipe key fingerprint FILE)", args[0])
		},
	}
	key.AddCommand(&cobra.Command{
		Use:   "fingerprint FILE|-...",
		Short: "Print the fingerprint of each key file",
		Long: `Print, for each key file, its key's fingerprint and the file's name. The
fingerprint identifies the key without revealing it; the same file gives the
same fingerprint everywhere, and "spipe listen" and "spipe connect" log the
fingerprints of the keys they load and of the key each connection used.

The key is the SHA-256 of the file's whole content, byte for byte: a file
copied with a newline added or lost is another key. Compare the fingerprints
at both ends when a connection is refused.`,
		Example: `  spipe key fingerprint /etc/spipe/key
  ssh server spipe key fingerprint /etc/spipe/key; spipe key fingerprint ~/.spipe/key`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.MinimumNArgs(1)(cmd, args); err != nil {
				return usageError{fmt.Errorf("%s: %w", cmd.Name(), err)}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			r, keys, err := keyring.Load(args, a.stdin, a.log)
			if err != nil {
				return err
			}
			for i, f := range r.Files() {
				fmt.Fprintf(a.stdout, "%s  %s\n", keys[i].Fingerprint(), f)
			}
			return nil
		},
	})
	return key
}
