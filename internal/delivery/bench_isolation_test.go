package delivery_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/operator"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

// isolationBoard is the body of the public read the flood sends (hack/loadgen's bench
// board, page 1 of 50 rows).
const isolationBoard = `{"package":"bench/ds","name":"main","page":1,"page_size":50}`

// isolationLayout is one way of running Podium: everything in one process (the operator
// with --public-read), or the operator and the read tier (--role=read) apart.
type isolationLayout struct {
	name  string
	split bool
}

// BenchmarkIsolation is issue 39's failure isolation figure, run by
// hack/bench/39-isolation.sh (skipped otherwise): against one control plane, for each
// layout in turn, podium-operator runs as built (PODIUM_ISOLATION_BIN/podium-operator),
// each process started inside the cgroup the script made for it (PODIUM_CGROUP_OPERATOR,
// PODIUM_CGROUP_READ: the CPU quota standing in for a Pod's limit), the delivery webhook
// served by the operator process. An org member creates N unannotated Jobs and N Jobs
// asking for the hosted secret they hold (annotated hub.podium.dev/secrets), the two kinds
// taking turns, first quiet and then while hack/loadgen floods the public read (of the
// one process, or of the read tier) with anonymous reads. Reported per layout and phase:
// p50 and p99 of each kind's create, the creates refused, and the delivering Job's cost
// (p50 of delivering minus p50 of unannotated).
//
//nolint:gocognit // one run, step by step: the control plane, then each layout's processes, quiet, flooded
func BenchmarkIsolation(b *testing.B) {
	bin := os.Getenv("PODIUM_ISOLATION_BIN")
	if bin == "" {
		b.Skip("run by hack/bench/39-isolation.sh (PODIUM_ISOLATION_BIN: the directory of podium-operator and podium-loadgen)")
	}
	n := envInt(b, "PODIUM_BENCH_N", 200)
	rows := envInt(b, "PODIUM_ISOLATION_ROWS", 2000)
	conns := envInt(b, "PODIUM_FLOOD_CONNS", 32)
	// Set (a taskset CPU list): the read tier and the flood run on these CPUs, the
	// script having pinned this process (so the control plane and the operator) to the others.
	readCPUs := os.Getenv("PODIUM_READ_CPUS")
	gomega.RegisterFailHandler(func(message string, _ ...int) { b.Fatal(message) })
	logf.SetLogger(logr.Discard())
	// SIGINT or SIGTERM (the script's clean-up) ends the run through its deferred stops:
	// envtest's kube-apiserver and etcd do not end with this process.
	ctx, cancel = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	var err error
	if testEnv, cfg, err = testenv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := testEnv.Stop(); err != nil {
			b.Error("stopping the control plane:", err)
		}
	}()
	if k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
		b.Fatal(err)
	}
	if clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		b.Fatal(err)
	}
	if err := testenv.ApplyOrgRoles(ctx, clientset); err != nil {
		b.Fatal(err)
	}
	if err := k8sClient.Create(ctx, runSubmitterRole()); err != nil {
		b.Fatal(err)
	}
	if err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testenv.DeliveryNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	work := b.TempDir()
	logs := cmp.Or(os.Getenv("PODIUM_ISOLATION_LOGS"), work)
	adminKC := filepath.Join(work, "admin.kubeconfig")
	admin, err := testEnv.AddUser(envtest.User{Name: "podium-bench-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	data, err := admin.KubeConfig()
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(adminKC, data, 0o600); err != nil {
		b.Fatal(err)
	}
	// The read tier as its ServiceAccount with the installed RBAC (config/read/rbac.yaml).
	kubectl, err := testenv.Kubectl()
	if err != nil {
		b.Fatal(err)
	}
	if out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", adminKC, "apply", "-f",
		filepath.Join(testenv.RepoRoot(), "config", "read", "rbac.yaml")).CombinedOutput(); err != nil {
		b.Fatalf("applying config/read/rbac.yaml: %v\n%s", err, out)
	}
	readKC := readTierKubeconfig(b, filepath.Join(work, "read.kubeconfig"))
	webhookAddr := freeAddr(b)
	_, webhookPort, _ := net.SplitHostPort(webhookAddr)
	if err := testenv.InstallWebhook(ctx, k8sClient, "https://localhost:"+webhookPort); err != nil {
		b.Fatal(err)
	}
	loadgen := filepath.Join(bin, "podium-loadgen")
	if out, err := exec.CommandContext(ctx, loadgen, "seed", "-kubeconfig", adminKC, "-rows", strconv.Itoa(rows),
		"-etcd", testEnv.ControlPlane.Etcd.URL.String()).CombinedOutput(); err != nil {
		b.Fatalf("seeding the bench board: %v\n%s", err, out)
	}

	var (
		o   org
		p   person
		ask = map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}
	)
	// create creates one Job as p, untimed settling of a delivering one (its run Secret
	// is written and adopted after the answer, as in BenchmarkAdmission), and says how
	// long the create call took and whether it was refused.
	create := func(name string, annotations map[string]string) (time.Duration, bool) {
		if ctx.Err() != nil {
			b.Fatal("interrupted")
		}
		start := time.Now()
		created, err := p.CS.BatchV1().Jobs(o.Name).Create(ctx, job(name, annotations), metav1.CreateOptions{})
		took := time.Since(start)
		if err != nil {
			return took, true
		}
		if annotations != nil {
			runSecret, ok := created.Labels[hubv1alpha1.LabelRunSecret]
			if !ok {
				b.Fatalf("delivering Job %s created without a run Secret", name)
			}
			settled(b, o.Name, runSecret)
		}
		return took, false
	}
	layouts := []isolationLayout{{"one-process", false}, {"split", true}}
	if os.Getenv("PODIUM_ISOLATION_ORDER") == "split-first" {
		layouts[0], layouts[1] = layouts[1], layouts[0]
	}
	for li, l := range layouts {
		procCtx, stopProcs := context.WithCancel(ctx)
		opAddr := freeAddr(b)
		opArgs := []string{"--kubeconfig", adminKC, "--http-addr", opAddr,
			"--read-service-account", testenv.ReadTierUser,
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
			"--webhook-addr", webhookAddr, "--webhook-dns-names", "localhost",
			"--webhook-cert-secret", testenv.DeliveryNamespace + "/" + operator.DefaultCertSecretName,
			"--secret-value-namespace", testenv.DeliveryNamespace,
			"--admission-probe-namespace", testenv.DeliveryNamespace}
		if !l.split {
			opArgs = append(opArgs, "--public-read")
		}
		opDone := startInCgroup(procCtx, b, os.Getenv("PODIUM_CGROUP_OPERATOR"), "", filepath.Join(logs, l.name+"-operator.log"),
			filepath.Join(bin, "podium-operator"), opArgs...)
		awaitReady(b, "http://"+opAddr, opDone)
		readAddr := opAddr
		var readDone <-chan error
		if l.split {
			readAddr = freeAddr(b)
			readDone = startInCgroup(procCtx, b, os.Getenv("PODIUM_CGROUP_READ"), readCPUs, filepath.Join(logs, l.name+"-read.log"),
				filepath.Join(bin, "podium-operator"), "--role=read", "--kubeconfig", readKC, "--http-addr", readAddr,
				"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--operator-url", "http://"+opAddr)
			awaitReady(b, "http://"+readAddr, readDone)
		}
		readURL := "http://" + readAddr + "/v1/leaderboard-read"
		if out, err := exec.CommandContext(ctx, loadgen, "await", "-url", readURL, "-body", isolationBoard,
			"-total", strconv.Itoa(rows), "-timeout", "2m").CombinedOutput(); err != nil {
			b.Fatalf("%s: the public read does not serve the bench board: %v\n%s", l.name, err, out)
		}
		op = &testenv.Operator{BaseURL: "http://" + opAddr}
		if li == 0 {
			o = newOrg("isolation")
			p = newPerson(o, "runner")
			store(p, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-bench-000000000000"})
		}
		// Until the apiserver reaches this process's webhook (its certificate written,
		// the caBundle current), then a warm-up of both kinds, untimed.
		for i, deadline := 0, time.Now().Add(time.Minute); ; i++ {
			if _, refused := create(fmt.Sprintf("%s-probe-%d", l.name, i), ask); !refused {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s: delivering Jobs still refused a minute after the operator was ready", l.name)
			}
			time.Sleep(200 * time.Millisecond)
		}
		for i := range 20 {
			create(fmt.Sprintf("%s-warm-plain-%d", l.name, i), nil)
			create(fmt.Sprintf("%s-warm-asks-%d", l.name, i), ask)
		}
		var costs [2]float64
		for pi, phase := range []string{"quiet", "flooded"} {
			var flood *exec.Cmd
			var floodOut bytes.Buffer
			if phase == "flooded" {
				// Bounded: it stops by itself after ten minutes if not stopped first.
				name, args := loadgen, []string{"load", "-url", readURL, "-body", isolationBoard, "-c", strconv.Itoa(conns), "-d", "10m"}
				if readCPUs != "" {
					name, args = "taskset", append([]string{"-c", readCPUs, loadgen}, args...)
				}
				flood = exec.CommandContext(ctx, name, args...)
				flood.Stdout, flood.Stderr = &floodOut, &floodOut
				flood.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
				if err := flood.Start(); err != nil {
					b.Fatal(err)
				}
				time.Sleep(3 * time.Second) // the flood at full rate before the first create
			}
			plain, asks := make([]time.Duration, 0, n), make([]time.Duration, 0, n)
			var plainRefused, asksRefused int
			for i := range n {
				d, refused := create(fmt.Sprintf("%s-%s-plain-%d", l.name, phase, i), nil)
				if refused {
					plainRefused++
				} else {
					plain = append(plain, d)
				}
				d, refused = create(fmt.Sprintf("%s-%s-asks-%d", l.name, phase, i), ask)
				if refused {
					asksRefused++
				} else {
					asks = append(asks, d)
				}
			}
			if flood != nil {
				_ = flood.Process.Signal(syscall.SIGTERM)
				if err := flood.Wait(); err != nil {
					b.Errorf("%s: the flood: %v\n%s", l.name, err, floodOut.String())
				}
				fmt.Fprintf(os.Stderr, "flood %s: %s\n", l.name, strings.TrimSpace(floodOut.String()))
			}
			if len(plain) == 0 || len(asks) == 0 {
				b.Fatalf("%s %s: every create of a kind refused (%d unannotated, %d delivering)", l.name, phase, plainRefused, asksRefused)
			}
			b.Run(l.name+"/"+phase+"/job-unannotated", func(b *testing.B) {
				reportQuantiles(b, plain)
				b.ReportMetric(float64(plainRefused), "refused")
			})
			b.Run(l.name+"/"+phase+"/job-delivery", func(b *testing.B) {
				reportQuantiles(b, asks)
				b.ReportMetric(float64(asksRefused), "refused")
			})
			costs[pi] = ms(asks[(len(asks)-1)/2]) - ms(plain[(len(plain)-1)/2]) // the p50s reported (sorted by reportQuantiles)
		}
		b.Run(l.name+"/delivery-cost", func(b *testing.B) {
			b.ReportMetric(costs[0], "quiet-ms")
			b.ReportMetric(costs[1], "flooded-ms")
			if costs[0] > 0 {
				b.ReportMetric(costs[1]/costs[0], "ratio")
			}
		})
		stopProcs()
		if err := <-opDone; err != nil && !isTerminated(err) {
			b.Errorf("%s: the operator: %v", l.name, err)
		}
		if readDone != nil {
			if err := <-readDone; err != nil && !isTerminated(err) {
				b.Errorf("%s: the read tier: %v", l.name, err)
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	v, err := strconv.Atoi(cmp.Or(os.Getenv(name), strconv.Itoa(def)))
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return v
}

func freeAddr(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startInCgroup runs binary with args, its log in logPath, inside the cgroup directory
// cgroup (unless ""): a shell writes its own PID into cgroup.procs and then execs the
// binary, so that the process starts under the quota (as in a Pod, where the Go runtime
// sizes GOMAXPROCS from it at start); on the CPUs cpus (a taskset list) unless "". It
// gets SIGTERM when ctx ends, SIGKILL when this process dies. The channel has its exit.
func startInCgroup(ctx context.Context, b *testing.B, cgroup, cpus, logPath, binary string, args ...string) <-chan error {
	b.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	name, argv := binary, args
	if cpus != "" {
		name, argv = "taskset", append([]string{"-c", cpus, binary}, args...)
	}
	if cgroup != "" {
		name, argv = "/bin/sh", append([]string{"-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cgroup, name}, argv...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- cmd.Wait()
		log.Close()
	}()
	return done
}

// isTerminated says whether err is a process's exit once its context ended (the
// SIGTERM sent), not a failure of its own.
func isTerminated(err error) bool {
	var exit *exec.ExitError
	return errors.Is(err, context.Canceled) || errors.As(err, &exit) && !exit.Exited()
}

// awaitReady waits (at most two minutes) until base/readyz answers 200.
func awaitReady(b *testing.B, base string, done <-chan error) {
	b.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-done:
			b.Fatalf("%s exited before it was ready: %v", base, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
	b.Fatalf("%s not ready within two minutes", base)
}

// readTierKubeconfig writes a kubeconfig with a token of the read tier's ServiceAccount
// (podium-system/podium-read) and nothing else, as make dev does.
func readTierKubeconfig(b *testing.B, path string) string {
	b.Helper()
	if err := testenv.WriteReadKubeconfig(ctx, cfg, path, 24*60*60); err != nil {
		b.Fatal(err)
	}
	return path
}
