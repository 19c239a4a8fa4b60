package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLockStateRefusesASecondRunAtOnce(t *testing.T) {
	dir := t.TempDir()
	first, err := lockState(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The first lock is held until the end of this test: a lock that waited instead of
	// refusing would never return (no time bound needed, none that a busy machine breaks).
	_, err = lockState(dir)
	if err == nil {
		t.Fatal("a second lock of the same data directory succeeded")
	}
	if want := "pid " + strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "already running") {
		t.Errorf("error %q does not say who holds the directory (%s)", err, want)
	}
	first.Close()
	again, err := lockState(dir)
	if err != nil {
		t.Fatalf("the lock was not released with its holder: %v", err)
	}
	again.Close()
}

func TestServiceAccountKeyIsKept(t *testing.T) {
	dir := t.TempDir()
	key, pub, err := serviceAccountKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	k1, _ := os.ReadFile(key)
	p1, _ := os.ReadFile(pub)
	if !strings.Contains(string(k1), "PRIVATE KEY") || !strings.Contains(string(p1), "PUBLIC KEY") {
		t.Fatalf("unexpected key files:\n%s\n%s", k1, p1)
	}
	if fi, _ := os.Stat(key); fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v, want 0600", fi.Mode().Perm())
	}
	key2, pub2, err := serviceAccountKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := os.ReadFile(key2)
	p2, _ := os.ReadFile(pub2)
	if string(k1) != string(k2) || string(p1) != string(p2) {
		t.Error("a second run made a new signing key: tokens minted before it would stop working")
	}
}

func TestSupervisorRestartsADyingOperatorWithBackoff(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	// A stand-in operator that records each start and dies at once.
	s := newSupervisor("/bin/sh", "-c", `echo start >> "$0"; exit 3`, starts)
	s.minBackoff, s.maxBackoff = 50*time.Millisecond, 200*time.Millisecond
	// The waits the supervisor chooses, not the gaps a busy machine measures: it stops
	// after the fifth (a minute is only the guard against a supervisor that never
	// restarts).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var waits []time.Duration
	s.waiting = func(d time.Duration) {
		if waits = append(waits, d); len(waits) == 5 {
			cancel()
		}
	}
	if err := s.run(ctx); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond}
	if !slices.Equal(waits, want) {
		t.Errorf("waits before each restart = %v, want %v (doubling up to the maximum)", waits, want)
	}
	b, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "start"); n != 5 {
		t.Errorf("%d starts, want 5: one per wait", n)
	}
}

func TestSupervisorStopsTheOperatorWithTheContext(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := newSupervisor("/bin/sh", "-c", `echo $$ > "$0"; exec sleep 60`, pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.run(ctx) }()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		t.Fatal("the operator never started")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after the context ended")
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("the operator (pid %d) still runs", pid)
	}
}
