package main

import (
	"github.com/spf13/cobra"

	"github.com/spipe-dev/spipe/internal/service"
)

func (a *app) connectCommand() *cobra.Command {
	var p pipeFlags
	cmd := &cobra.Command{
		Use:   "connect [-s ADDR] -t ADDR -k FILE",
		Short: "Forward plaintext connections, encrypted, to a spipe listen",
		Long: `Accept plaintext connections on -s and forward each one, encrypted, to the
spipe listen at -t. Without -s, carry one connection over stdin/stdout and
exit when it ends: the form ssh's ProxyCommand wants (there, SIGHUP is ignored
and a failure is one line on stderr).

If the server refuses the handshake it closes the connection without saying
why, by design; the error lists the likely causes. Compare the keys with
"spipe key fingerprint FILE" at both ends.`,
		Example: `  spipe connect -s 127.0.0.1:8080 -t server.example:8443 -k ~/.spipe/key
  # in ssh's ProxyCommand: the brackets keep an IPv6 %h whole (and are fine around names)
  ssh -o ProxyCommand='spipe connect -t [%h]:8022 -k ~/.spipe/key' server.example
  # socket-activated by systemd (contrib/systemd)
  spipe connect -s systemd:spipe -t server.example:8443 -k "$CREDENTIALS_DIRECTORY/key"`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runPipe(cmd, &p, service.Connect) },
	}
	p.register(cmd.Flags(), service.Connect)
	return cmd
}
