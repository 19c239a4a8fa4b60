// Package controllermanager runs kube-controller-manager (built by hack/controlplane.sh
// from the same pinned Kubernetes modules as kube-apiserver) against a local control
// plane, so that `make dev` and the tests that need them have the controllers a real
// cluster has: the garbage collector (a deleted Leaderboard takes its rows with it) and
// the namespace controller (a deleted namespace is emptied and goes away).
package controllermanager

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultControllers are the controllers the tests need.
var DefaultControllers = []string{"garbage-collector-controller", "namespace-controller"}

// Options say how to run kube-controller-manager.
type Options struct {
	// Binary is the kube-controller-manager executable.
	Binary string
	// Kubeconfig is a kubeconfig of a user allowed to do anything (the garbage collector
	// deletes objects of every kind).
	Kubeconfig string
	// Controllers to run; DefaultControllers when empty.
	Controllers []string
	// Output receives the process's log; nil discards it.
	Output io.Writer
	// ServiceAccountCredentials runs each controller with its own ServiceAccount's
	// credentials (--use-service-account-credentials), as most clusters do: its requests
	// then come as system:serviceaccount:kube-system:<controller>, with that controller's
	// bootstrap RBAC role. Otherwise every controller acts as the kubeconfig's user.
	ServiceAccountCredentials bool
}

// Process is a running kube-controller-manager.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts kube-controller-manager, its health endpoint on a free 127.0.0.1 port,
// and waits (at most a minute) until /healthz answers 200.
func Start(ctx context.Context, o Options) (*Process, error) {
	if _, err := os.Stat(o.Binary); err != nil {
		return nil, fmt.Errorf("kube-controller-manager: %w (hack/controlplane.sh builds it)", err)
	}
	controllers := o.Controllers
	if len(controllers) == 0 {
		controllers = DefaultControllers
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	certDir, err := os.MkdirTemp("", "kube-controller-manager-")
	if err != nil {
		return nil, err
	}
	out := o.Output
	if out == nil {
		out = io.Discard
	}
	cmd := exec.Command(o.Binary,
		"--kubeconfig="+o.Kubeconfig,
		"--controllers="+strings.Join(controllers, ","),
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(port),
		"--cert-dir="+certDir,
		"--use-service-account-credentials="+strconv.FormatBool(o.ServiceAccountCredentials),
	)
	cmd.Stdout, cmd.Stderr = out, out
	// Never outlive the process that started it, even when it dies without stopping us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(certDir)
		return nil, fmt.Errorf("starting kube-controller-manager: %w", err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		os.RemoveAll(certDir)
		close(p.done)
	}()
	if err := p.waitHealthy(ctx, port); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err says how the process exited; read it after Done is closed.
func (p *Process) Err() error { return p.err }

// Stop stops the process (SIGTERM, then SIGKILL after ten seconds) and waits for it.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *Process) waitHealthy(ctx context.Context, port int) error {
	// The health endpoint serves a self-signed certificate made at start; it is on
	// 127.0.0.1 and says nothing secret.
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a local health probe
	}}
	defer c.CloseIdleConnections()
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	deadline := time.After(time.Minute)
	for {
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("kube-controller-manager exited before it was healthy: %w", p.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return errors.New("kube-controller-manager was not healthy within a minute")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// BinaryIn returns the kube-controller-manager path in a control plane directory (what
// hack/controlplane.sh prints).
func BinaryIn(assets string) string { return filepath.Join(assets, "kube-controller-manager") }
