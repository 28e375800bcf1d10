package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
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
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // keep the pages reproducible
			hdr := &doc.GenManHeader{Title: "SPIPE", Section: "1", Source: "spipe " + versionString(), Manual: "spipe manual"}
			if err := doc.GenManTree(root, hdr, args[0]); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			return nil
		},
	}
}
