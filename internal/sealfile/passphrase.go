package sealfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"golang.org/x/term"
)

// ErrNoTerminal: --passphrase was given but there is no terminal to read
// it from.
var ErrNoTerminal = errors.New("--passphrase reads the passphrase from a terminal, and this process has none (no /dev/tty); use a key file (-k) for unattended runs")

// ttyPath is the terminal the passphrase is read from: the process's
// controlling terminal, whatever stdin and stdout carry (they carry the
// data).
var ttyPath = "/dev/tty"

// ReadPassphrase prompts on the terminal and reads a passphrase without
// echo. With confirm (sealing) it asks twice and requires the same
// answer. An empty passphrase is refused.
func ReadPassphrase(confirm bool) ([]byte, error) {
	tty, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	if err != nil {
		return nil, ErrNoTerminal
	}
	defer tty.Close()
	if !term.IsTerminal(int(tty.Fd())) {
		return nil, ErrNoTerminal
	}
	read := func(prompt string) ([]byte, error) {
		fmt.Fprint(tty, prompt)
		p, err := term.ReadPassword(int(tty.Fd()))
		fmt.Fprint(tty, "\n")
		if err != nil {
			return nil, fmt.Errorf("reading the passphrase: %w", err)
		}
		return p, nil
	}
	p, err := read("Passphrase: ")
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, errors.New("empty passphrase")
	}
	if confirm {
		again, err := read("Passphrase again: ")
		defer clear(again)
		if err != nil {
			clear(p)
			return nil, err
		}
		if !bytes.Equal(p, again) {
			clear(p)
			return nil, errors.New("the passphrases differ")
		}
	}
	return p, nil
}
