package main

import (
	"github.com/spf13/cobra"

	"github.com/spipe-dev/spipe/internal/keyring"
)

func (a *app) keygenCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "keygen FILE",
		Short: "Write a new random key file (mode 0600)",
		Long: `Write 32 random bytes, as 64 hex digits and a newline, to FILE with mode 0600.
An existing FILE is kept unless --force is given. Copy the file to both ends
over a channel you trust (scp, a secrets manager).`,
		Example: `  spipe keygen ~/.spipe/key
  spipe keygen --force /etc/spipe/key`,
		Args: exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := keyring.Generate(args[0], force); err != nil {
				return err
			}
			a.log.Debug("key written", "file", args[0])
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite FILE if it exists")
	return cmd
}
