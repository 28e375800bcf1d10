package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/spipe-dev/spipe/internal/bench"
)

func (a *app) benchCommand() *cobra.Command {
	var (
		size int
		dur  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure keystream and AEAD throughput of every cipher on this machine",
		Long: `Measure, one after the other, the keystream throughput of ChaCha and Salsa20
at 20, 12 and 8 rounds and the sealing throughput of every AEAD suite, and
print a table (MB/s = 10^6 bytes per second). A progress line runs on stderr.`,
		Example: `  spipe bench
  spipe bench --size 16384 --time 1s`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if size < 64 || size > 64<<20 {
				return usagef("--size %d: want 64 to %d bytes", size, 64<<20)
			}
			if dur <= 0 {
				return usagef("--time %v: must be positive", dur)
			}
			cases, err := bench.Cases()
			if err != nil {
				return err
			}
			results := make([]bench.Result, 0, len(cases))
			for i, c := range cases {
				fmt.Fprintf(a.stderr, "\rbench %2d/%d: %-40s", i+1, len(cases), c.Name+" "+c.Kind)
				results = append(results, bench.Measure(c, size, dur))
			}
			fmt.Fprintf(a.stderr, "\r%-60s\r", "")
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "CIPHER\tMEASURE\tKERNEL\t%8s\n", "MB/s")
			for _, r := range results {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%8.0f\n", r.Name, r.Kind, r.Kernel, r.BytesPerSec/1e6)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&size, "size", 64<<10, "bytes per call (the pipe seals up to 64 KiB per frame when interactive, up to 1 MiB in bulk)")
	cmd.Flags().DurationVar(&dur, "time", 300*time.Millisecond, "time spent on each cipher")
	return cmd
}
