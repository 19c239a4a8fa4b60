//go:build benchgc

package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// In the bench-only build (go build -tags benchgc), PODIUM_BENCH_CPUPROFILE names a file
// that receives a CPU profile of the process from its start until SIGHUP:
// hack/bench/39-scale-out.sh profiles a read replica's start-up with it
// (docs/design/performance-log.md, "Scale-out"). Never in a release build.
func init() {
	path := os.Getenv("PODIUM_BENCH_CPUPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchprof:", err)
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "benchprof:", err)
		return
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGHUP)
	go func() {
		<-c
		pprof.StopCPUProfile()
		_ = f.Close()
		fmt.Fprintln(os.Stderr, "benchprof: CPU profile written")
	}()
}
