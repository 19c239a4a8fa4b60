// Command admissiongen writes the run admission policies (config/admission/run_*.yaml)
// and the delivery webhook's configuration (config/webhook/manifests.yaml) from
// internal/admissiongen. Run from the repository root: go run ./hack/admissiongen.
package main

import (
	"flag"
	"fmt"
	"os"

	"podium.dev/podium/internal/admissiongen"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if err := admissiongen.Write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "admissiongen:", err)
		os.Exit(1)
	}
}
