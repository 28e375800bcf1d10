package main

import (
	"github.com/spf13/cobra"

	"github.com/spipe-dev/spipe/internal/service"
)

func (a *app) listenCommand() *cobra.Command {
	var p pipeFlags
	cmd := &cobra.Command{
		Use:   "listen -s ADDR -t ADDR -k FILE [-k FILE...]",
		Short: "Accept encrypted connections and forward the plaintext to a target",
		Long: `Accept spipe connections on -s, run the handshake, and only once the client
has proven it holds a key, connect to -t and forward the plaintext both ways.

Several -k admit clients holding any of those keys, so keys rotate without
downtime; SIGHUP re-reads the key files without dropping open connections.
SIGINT or SIGTERM stop accepting (with --metrics, /healthz answers 503 at
once and accepting stops --drain-delay later, so that a load balancer moves
first), give open connections --shutdown-timeout to finish, then close them
and exit 0; a second signal closes them at once. The log names the
fingerprint of every key loaded, and of the key each connection used.`,
		Example: `  spipe listen -s 0.0.0.0:8022 -t 127.0.0.1:22 -k /etc/spipe/key
  spipe listen -s '[::]:8443' -t /run/app.sock -k new.key -k old.key --metrics 127.0.0.1:9100
  spipe listen -s :8080 -t 127.0.0.1:80 -k key --proxy-protocol --max-conns 500
  # socket-activated by systemd (contrib/systemd)
  spipe listen -s systemd:spipe -t 127.0.0.1:22 -k "$CREDENTIALS_DIRECTORY/key"`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runPipe(cmd, &p, service.Listen) },
	}
	p.register(cmd.Flags(), service.Listen)
	return cmd
}
