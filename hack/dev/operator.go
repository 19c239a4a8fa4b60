package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// supervisor runs podium-operator and starts it again when it dies, after a backoff
// that doubles up to a limit and starts over once a run has lasted a while: a crash
// while developing should not tear down the control plane and its data.
type supervisor struct {
	// name is what the messages call the process (podium-operator, podium-read).
	name   string
	binary string
	args   []string
	// minBackoff, maxBackoff bound the wait before a restart; a run longer than
	// healthyRun resets it.
	minBackoff, maxBackoff, healthyRun time.Duration
	// waiting, when set, is told each wait before a restart (tests).
	waiting func(time.Duration)
}

func newSupervisor(binary string, args ...string) *supervisor {
	return &supervisor{
		name: "podium-operator", binary: binary, args: args,
		minBackoff: time.Second, maxBackoff: 30 * time.Second, healthyRun: time.Minute,
	}
}

// run keeps the operator running until ctx ends, then stops it (SIGTERM, SIGKILL after
// 15 s). It returns only when ctx ends or the binary cannot be started at all.
func (s *supervisor) run(ctx context.Context) error {
	backoff := s.minBackoff
	for {
		began := time.Now()
		cmd := exec.Command(s.binary, s.args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting %s: %w", s.name, err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-ctx.Done():
			fmt.Println(">> stopping", s.name)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case err := <-done:
				s.exited(err)
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				s.exited(<-done)
			}
			return nil
		case err := <-done:
			if time.Since(began) > s.healthyRun {
				backoff = s.minBackoff
			}
			fmt.Fprintf(os.Stderr, ">> %s exited (%v); restarting it in %s (the control plane keeps running)\n", s.name, exitText(err), backoff)
			if s.waiting != nil {
				s.waiting(backoff)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, s.maxBackoff)
		}
	}
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// exited reports how the process ended when it did not end cleanly.
func (s *supervisor) exited(err error) {
	if err != nil {
		fmt.Printf(">> %s: %v\n", s.name, err)
	}
}
