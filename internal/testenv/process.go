package testenv

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// StartOperatorProcess runs the built operator binary ($PODIUM_BIN/podium-operator, as
// `make test` builds it) as another replica beside an in-process one: its own process,
// caches and HTTP API on a free 127.0.0.1 port, an admin kubeconfig, the same fingerprint
// key Secret as the in-process operator. It stops when ctx ends (and with the test
// process: it gets SIGKILL when its parent dies). Its log goes to out.
func StartOperatorProcess(ctx context.Context, env *envtest.Environment, cfg *rest.Config, out io.Writer) (*Operator, error) {
	bin := os.Getenv("PODIUM_BIN")
	if bin == "" {
		return nil, errors.New("PODIUM_BIN is not set (make test sets it to the directory of the built binaries)")
	}
	dir, kubeconfig, err := adminKubeconfig(env, cfg, "podium-replica", "podium-replica-")
	if err != nil {
		return nil, err
	}
	if err := ensureNamespace(ctx, cfg, DeliveryNamespace); err != nil {
		return nil, err
	}
	return startBinary(ctx, "the operator process", bin, dir, out,
		"--kubeconfig", kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--fingerprint-key-secret", DeliveryNamespace+"/"+FingerprintKeySecret, "--admission-probe-namespace", DeliveryNamespace,
		"--public-read") // as the in-process operator (StartOperator) serves it
}

// startBinary runs bin/podium-operator with args and its HTTP API on a free 127.0.0.1
// port until ctx ends (SIGTERM, then SIGKILL after 20 s; SIGKILL when the test process
// dies), removes dir once it has exited, and waits until its /readyz answers 200; what
// names it in errors.
func startBinary(ctx context.Context, what, bin, dir string, out io.Writer, args ...string) (*Operator, error) {
	addr, err := FreeAddr()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "podium-operator"), append(args, "--http-addr", addr)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	done := make(chan struct{})
	op := &Operator{BaseURL: "http://" + addr, Done: done}
	go func() {
		defer close(done)
		op.err = cmd.Wait()
		os.RemoveAll(dir)
	}()
	return op.awaitReady(what)
}

// FreeAddr is a 127.0.0.1 address whose port was free when asked, for a program a test
// starts to listen on: the port is closed again before it returns, so another process
// may take it in between (the program then fails to start).
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
