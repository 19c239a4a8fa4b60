// Command podium is Podium's command-line client.
package main

import (
	"os"

	"podium.dev/podium/internal/cli"
)

func main() { os.Exit(cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
