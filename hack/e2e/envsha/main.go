// Command envsha prints, for each environment variable named on its command line, the
// SHA-256 of its value (never the value): "NAME sha256:<hex>". A variable that is
// unset or empty is reported as such and makes it exit 1. The e2e test runs it as the
// container of a Job that asks for a hosted secret, and compares the digest with the
// one of the value it stored (docs/development.md, "The e2e node").
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
)

func main() {
	code := 0
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: envsha NAME...")
		os.Exit(2)
	}
	for _, name := range os.Args[1:] {
		v, ok := os.LookupEnv(name)
		if !ok || v == "" {
			fmt.Printf("%s unset\n", name)
			code = 1
			continue
		}
		fmt.Printf("%s sha256:%x\n", name, sha256.Sum256([]byte(v)))
	}
	os.Exit(code)
}
