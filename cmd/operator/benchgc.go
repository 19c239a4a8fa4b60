//go:build benchgc

package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
)

// A bench-only build (go build -tags benchgc) of the operator whose collector the read
// bench turns off and on while the process serves, so that the same process, with the
// same heap, is measured with and without GC cycles (docs/design/performance-log.md, "Where the
// tail comes from"): SIGUSR1 collects once and turns the collector off (GOGC=off),
// SIGUSR2 turns it back on at the GOGC the process started with. Never in a release
// build: with the collector off the heap grows without bound.
func init() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		old := -2 // not switched off
		for s := range c {
			switch {
			case s == syscall.SIGUSR1 && old == -2:
				runtime.GC()
				old = debug.SetGCPercent(-1)
				fmt.Fprintln(os.Stderr, "benchgc: collector off")
			case s == syscall.SIGUSR2 && old != -2:
				debug.SetGCPercent(old)
				old = -2
				runtime.GC() // give back the garbage of the run without a collector
				fmt.Fprintln(os.Stderr, "benchgc: collector on")
			}
		}
	}()
}
