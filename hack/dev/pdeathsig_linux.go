package main

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func setParentDeathSignal(sig syscall.Signal) error {
	return unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(sig), 0, 0, 0)
}
