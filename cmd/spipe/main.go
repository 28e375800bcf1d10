// Command spipe is a secure pipe: "spipe listen" accepts encrypted,
// authenticated connections and forwards the plaintext to a target;
// "spipe connect" carries local plaintext, from a listening socket or
// stdin/stdout, encrypted to a "spipe listen". See "spipe --help".
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
