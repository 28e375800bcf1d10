package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/spipe-dev/spipe/internal/keyring"
)

func (a *app) keygenCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "keygen FILE|-",
		Short: "Write a new random key file (mode 0600) and print its fingerprint",
		Long: `Write 32 random bytes, as 64 hex digits and a newline, to FILE with mode 0600,
creating missing directories with mode 0700, and print the key's fingerprint
and FILE. With - the key goes to standard output and the fingerprint line to
standard error. An existing FILE is kept unless --force is given.

Copy the file to both ends over a channel you trust (scp, a secrets manager),
byte for byte: the key is the SHA-256 of the whole file, trailing newline
included. "spipe key fingerprint FILE" at each end must print the same.`,
		Example: `  spipe keygen ~/.spipe/key
  spipe keygen --force /etc/spipe/key
  spipe keygen - | ssh server 'umask 077; cat > /etc/spipe/key'`,
		Args: exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if args[0] == keyring.Stdin {
				k, err := keyring.GenerateTo(a.stdout)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stderr, "%s  %s\n", k.Fingerprint(), args[0])
				return nil
			}
			k, err := keyring.Generate(args[0], force)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s  %s\n", k.Fingerprint(), args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite FILE if it exists")
	return cmd
}
