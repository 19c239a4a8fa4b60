// Command golangci-lint is golangci-lint (the version pinned in this module's go.mod)
// with Kube API Linter registered as a module plugin (the kubeapilinter linter that
// .golangci.yml runs on api/). It is golangci-lint's own command, built here because
// `golangci-lint custom` would fetch golangci-lint's source with git, which this
// machine cannot do; the Go module proxy serves both modules.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/golangci/golangci-lint/v2/pkg/commands"
	"github.com/golangci/golangci-lint/v2/pkg/exitcodes"
	_ "sigs.k8s.io/kube-api-linter" // registers the kubeapilinter module plugin
)

func main() {
	info := commands.BuildInfo{Version: "unknown", Commit: "?", GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/golangci/golangci-lint/v2" {
				info.Version = dep.Version + "+kube-api-linter"
			}
		}
	}
	if err := commands.Execute(info); err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "Failed executing command with error: %v\n", err)
		os.Exit(exitcodes.Failure)
	}
}
