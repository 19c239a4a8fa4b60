package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"podium.dev/podium/internal/testenv"
)

// devRun is one podium-dev process of the test, with its output collected.
type devRun struct {
	cmd *exec.Cmd
	// metricsAddr is where its operator serves /metrics.
	metricsAddr string
	mu          sync.Mutex
	out         strings.Builder
	done        chan struct{}
}

func startDev(t *testing.T, bin, root, state, addr string) *devRun {
	t.Helper()
	d := &devRun{done: make(chan struct{}), metricsAddr: freeAddr(t)}
	d.cmd = exec.Command(filepath.Join(bin, "podium-dev"))
	d.cmd.Dir = root
	d.cmd.Env = append(os.Environ(), "PODIUM_DEV_DIR="+state, "PODIUM_HTTP_ADDR="+addr, "PODIUM_METRICS_ADDR="+d.metricsAddr)
	r, w := io.Pipe()
	d.cmd.Stdout, d.cmd.Stderr = w, w
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			d.mu.Lock()
			d.out.WriteString(s.Text() + "\n")
			d.mu.Unlock()
		}
	}()
	go func() {
		_ = d.cmd.Wait()
		w.Close()
		close(d.done)
	}()
	t.Cleanup(func() { d.stop(t) })
	return d
}

func (d *devRun) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// waitFor waits until the output holds s, at most timeout.
func (d *devRun) waitFor(t *testing.T, s string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if strings.Contains(d.output(), s) {
			return
		}
		select {
		case <-d.done:
			t.Fatalf("podium-dev exited before printing %q:\n%s", s, d.output())
		default:
		}
	}
	t.Fatalf("podium-dev did not print %q within %s:\n%s", s, timeout, d.output())
}

// stop sends SIGTERM, as make does, and waits for podium-dev to stop everything.
func (d *devRun) stop(t *testing.T) {
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(60 * time.Second):
		_ = d.cmd.Process.Kill()
		t.Errorf("podium-dev did not stop within a minute of SIGTERM:\n%s", d.output())
	}
}

// children are the pids of pid's child processes (started by any of its threads).
func children(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var out []int
	for _, task := range tasks {
		b, _ := os.ReadFile(task)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func commandOf(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// TestDevBehavesLikeACluster runs the real podium-dev (as `make dev` does) on a data
// directory of its own: the garbage collector deletes a deleted board's rows, a second
// podium-dev on the same directory stops at once, a killed operator is restarted, and a
// token minted before a restart works after it.
func TestDevBehavesLikeACluster(t *testing.T) {
	bin, assets := os.Getenv("PODIUM_BIN"), os.Getenv("KUBEBUILDER_ASSETS")
	if bin == "" || assets == "" {
		t.Fatal("PODIUM_BIN and KUBEBUILDER_ASSETS must be set (make test sets them)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	addr := freeAddr(t)
	kubeconfig := filepath.Join(state, "kubeconfig")
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(filepath.Join(assets, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	secretsStatus := func(token string) int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/secrets", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	dev := startDev(t, bin, root, state, addr)
	dev.waitFor(t, "Podium is running", 4*time.Minute)
	token := kubectl("create", "token", "-n", "demo", "demo-runner", "--duration=1h")
	if code := secretsStatus(token); code != http.StatusOK {
		t.Fatalf("GET /v1/secrets with a fresh token: %d", code)
	}

	t.Run("a second podium-dev on the same data directory stops at once", func(t *testing.T) {
		// The first podium-dev runs until the end of this test: one that waited for it
		// instead of refusing would be killed by this deadline (a guard, not a figure).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "podium-dev"))
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "PODIUM_DEV_DIR="+state, "PODIUM_HTTP_ADDR="+freeAddr(t))
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("it waited for the running one instead of refusing:\n%s", out)
		}
		if err == nil {
			t.Fatalf("it started:\n%s", out)
		}
		if want := "already running on " + state; !strings.Contains(string(out), want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	})

	t.Run("the dev admin reads /metrics with the token make dev prints", func(t *testing.T) {
		if !strings.Contains(dev.output(), "create token -n podium-system podium-dev-metrics") {
			t.Errorf("podium-dev does not say how to read the metrics:\n%s", dev.output())
		}
		reader := kubectl("create", "token", "-n", "podium-system", "podium-dev-metrics")
		insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the dev endpoint's certificate is self-signed
		get := func(token string) (int, string) {
			req, _ := http.NewRequest(http.MethodGet, "https://"+dev.metricsAddr+"/metrics", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := insecure.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		code, body := get(reader)
		if code != http.StatusOK || !strings.Contains(body, "podium_hostedsecrets{") || !strings.Contains(body, "podium_leaderboard_rows{") {
			t.Errorf("GET /metrics as podium-dev-metrics: %d\n%.800s", code, body)
		}
		// An org member's token does not read them.
		if code, _ := get(token); code != http.StatusForbidden {
			t.Errorf("GET /metrics as demo-runner: %d, want 403", code)
		}
	})

	t.Run("deleting a board deletes its rows (garbage collector)", func(t *testing.T) {
		sel := "hub.podium.dev/leaderboard=terminal-bench-nightly"
		g := NewWithT(t)
		// The samples' rows are created after Podium reports it is running: wait for them
		// before deleting their board, or there is nothing to collect.
		g.Eventually(func() string { return kubectl("get", "lbrow", "-n", "demo", "-l", sel, "-o", "name") }).
			WithTimeout(2*time.Minute).WithPolling(250*time.Millisecond).ShouldNot(BeEmpty(), "the sample board's rows")
		kubectl("delete", "lb", "-n", "demo", "terminal-bench-nightly")
		g.Eventually(func() string { return kubectl("get", "lbrow", "-n", "demo", "-l", sel, "-o", "name") }).
			WithTimeout(time.Minute).WithPolling(250*time.Millisecond).Should(BeEmpty(), "the rows a minute after their board was deleted")
	})

	t.Run("the read tier runs as podium-read and serves the public read at the one address", func(t *testing.T) {
		g := NewWithT(t)
		read := func() int {
			resp, err := http.Post("http://"+addr+"/v1/leaderboard-read", "application/json",
				strings.NewReader(`{"package":"demo/terminal-bench","name":"main","page":1,"page_size":5}`))
			if err != nil {
				return 0
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		g.Eventually(read).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Equal(http.StatusOK))
		if code := status(t, "http://"+addr+"/leaderboards"); code != http.StatusOK {
			t.Errorf("GET /leaderboards: %d", code)
		}
		// The read tier's own credential: no right on Secrets, none to write.
		readKC := filepath.Join(state, "read.kubeconfig")
		for _, args := range [][]string{{"get", "secrets", "-n", "podium-system"}, {"list", "secrets", "-A"}, {"create", "leaderboardrows", "-n", "demo"}} {
			out, _ := exec.Command(filepath.Join(assets, "kubectl"), append([]string{"--kubeconfig", readKC, "auth", "can-i"}, args...)...).CombinedOutput()
			if strings.TrimSpace(string(out)) != "no" {
				t.Errorf("the read tier's kubeconfig: can-i %v: %s", args, out)
			}
		}
		out, _ := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", readKC, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").CombinedOutput()
		if got := strings.TrimSpace(string(out)); got != "system:serviceaccount:podium-system:podium-read" {
			t.Errorf("the read tier runs as %q", got)
		}
	})

	t.Run("a killed read tier is started again", func(t *testing.T) {
		rd := child(dev, true)
		if rd == 0 {
			t.Fatalf("no podium-operator --role=read among podium-dev's children %v", children(dev.cmd.Process.Pid))
		}
		if err := syscall.Kill(rd, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		dev.waitFor(t, "podium-read exited", 30*time.Second)
		g := NewWithT(t)
		g.Eventually(func() int { return status(t, "http://"+addr+"/readyz") }).
			WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Equal(http.StatusOK))
	})

	t.Run("a killed operator is started again", func(t *testing.T) {
		op := child(dev, false)
		if op == 0 {
			t.Fatalf("no podium-operator among podium-dev's children %v", children(dev.cmd.Process.Pid))
		}
		if err := syscall.Kill(op, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		dev.waitFor(t, "podium-operator exited", 30*time.Second)
		// The operator's secrets API, through the one address, answers again.
		g := NewWithT(t)
		g.Eventually(func() int { return secretsStatus(token) }).
			WithTimeout(2*time.Minute).WithPolling(250*time.Millisecond).Should(Equal(http.StatusOK), "GET /v1/secrets after the restart")
	})

	dev.stop(t)
	// etcd (its data dir), kube-controller-manager and the operator (the kubeconfig)
	// name the data directory on their command lines.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		pid, _ := strconv.Atoi(strings.Split(p, "/")[2])
		if cmd := commandOf(pid); strings.Contains(cmd, state) {
			t.Errorf("left running after podium-dev stopped: %d %s", pid, cmd)
		}
	}
	dev = startDev(t, bin, root, state, addr)
	dev.waitFor(t, "Podium is running", 4*time.Minute)
	if code := secretsStatus(token); code != http.StatusOK {
		t.Errorf("GET /v1/secrets with a token minted before the restart: %d, want 200", code)
	}
	dev.stop(t)
}

// child is the pid of podium-dev's podium-operator child in the read role (read) or the
// operator role, 0 if none.
func child(d *devRun, read bool) int {
	for _, pid := range children(d.cmd.Process.Pid) {
		cmd := commandOf(pid)
		if strings.Contains(cmd, "podium-operator") && strings.Contains(cmd, "--role=read") == read {
			return pid
		}
	}
	return 0
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := testenv.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}
