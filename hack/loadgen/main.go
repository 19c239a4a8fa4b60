// Command podium-loadgen drives hack/bench/30-read.sh: it starts a local control plane,
// seeds a board with many rows, serves the naive read and the ceiling server the
// operator's read is compared with, and generates HTTP load.
//
//	podium-loadgen controlplane -kubeconfig FILE      # until SIGTERM
//	podium-loadgen seed -kubeconfig FILE -rows N
//	podium-loadgen await -url URL -total N
//	podium-loadgen list -kubeconfig FILE [-limit N]
//	podium-loadgen ceiling -addr ADDR -body FILE
//	podium-loadgen naive -kubeconfig FILE -addr ADDR
//	podium-loadgen load -url URL -body JSON -c N -n N | -d DURATION
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: podium-loadgen controlplane|seed|await|list|ceiling|naive|load [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmds := map[string]func(context.Context, []string) error{
		"controlplane": controlPlane,
		"seed":         seed,
		"await":        await,
		"ceiling":      ceiling,
		"naive":        naive,
		"load":         load,
		"list":         list,
	}
	cmd, ok := cmds[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "podium-loadgen: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
	if err := cmd(ctx, os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "podium-loadgen %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
