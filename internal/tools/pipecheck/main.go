// Command pipecheck is the load generator and target of "make demo": a
// sink that answers with the SHA-256 of everything it received, and a
// pusher that streams pseudo-random bytes through a pipe and checks that
// the sink saw exactly them.
//
//	pipecheck sink -l 127.0.0.1:9000
//	pipecheck push -c 127.0.0.1:9001 -n 1GiB
//	pipecheck freeport
//	pipecheck wait -c 127.0.0.1:9001
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fatal(errors.New("usage: pipecheck sink|push|freeport [flags]"))
	}
	var err error
	switch os.Args[1] {
	case "sink":
		err = sink(os.Args[2:])
	case "push":
		err = push(os.Args[2:])
	case "freeport":
		err = freeport()
	case "wait":
		err = wait(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "pipecheck:", err)
	os.Exit(1)
}

// sink accepts connections and answers each, once the client half-closes,
// with the hex SHA-256 of what it sent.
func sink(args []string) error {
	fs := flag.NewFlagSet("sink", flag.ExitOnError)
	addr := fs.String("l", "127.0.0.1:0", "address to listen on")
	fs.Parse(args)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			h := sha256.New()
			if _, err := io.CopyBuffer(h, c, make([]byte, 256<<10)); err != nil {
				fmt.Fprintln(os.Stderr, "pipecheck sink:", err)
				return
			}
			fmt.Fprintf(c, "%x\n", h.Sum(nil))
		}()
	}
}

// push sends n pseudo-random bytes, half-closes, and compares the sink's
// digest with its own.
func push(args []string) error {
	fs := flag.NewFlagSet("push", flag.ExitOnError)
	addr := fs.String("c", "", "address to connect to")
	size := fs.String("n", "1GiB", "bytes to send (suffixes KiB, MiB, GiB)")
	fs.Parse(args)
	n, err := parseSize(*size)
	if err != nil {
		return err
	}
	c, err := net.Dial("tcp", *addr)
	if err != nil {
		return err
	}
	defer c.Close()
	var seed [32]byte
	for i := range seed {
		seed[i] = byte(time.Now().UnixNano() >> (i % 8))
	}
	src := rand.NewChaCha8(seed)
	h := sha256.New()
	buf := make([]byte, 256<<10)
	start := time.Now()
	for left := n; left > 0; {
		b := buf[:min(int64(len(buf)), left)]
		src.Read(b)
		h.Write(b)
		if _, err := c.Write(b); err != nil {
			return fmt.Errorf("send: %w", err)
		}
		left -= int64(len(b))
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading the sink's digest: %w", err)
	}
	el := time.Since(start)
	want := hex.EncodeToString(h.Sum(nil))
	if strings.TrimSpace(line) != want {
		return fmt.Errorf("data corrupted: sent sha256 %s, sink got %s", want, strings.TrimSpace(line))
	}
	fmt.Printf("%d bytes in %.2fs: %.0f MB/s, sha256 %s… matches\n", n, el.Seconds(), float64(n)/el.Seconds()/1e6, want[:16])
	return nil
}

func freeport() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	return nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v * mult, nil
}

// wait returns once something accepts connections on the address, or
// fails after the timeout.
func wait(args []string) error {
	fs := flag.NewFlagSet("wait", flag.ExitOnError)
	addr := fs.String("c", "", "address to connect to")
	timeout := fs.Duration("t", 10*time.Second, "how long to wait")
	fs.Parse(args)
	deadline := time.Now().Add(*timeout)
	for {
		c, err := net.DialTimeout("tcp", *addr, time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %v: %w", *addr, *timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
