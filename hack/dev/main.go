// Command podium-dev runs the whole of Podium locally, which is what `make dev` starts:
// kube-apiserver and etcd on 127.0.0.1 (data and the ServiceAccount signing key under
// .podium-dev/, kept across runs), kube-controller-manager (garbage collector, namespace
// and ServiceAccount controllers), the CRDs, podium-operator in its two roles as two
// processes (the operator, and the read tier as its own ServiceAccount podium-read; each
// restarted with a backoff when it dies) behind one local address that sends each path to
// its workload (route.go), and the samples. SIGINT or SIGTERM stops every
// process it started. A second podium-dev on the same data directory refuses to start.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"podium.dev/podium/internal/controllermanager"
	"podium.dev/podium/internal/operator"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "podium-dev:", err)
		os.Exit(1)
	}
}

//nolint:funlen // the start-up of make dev, step by step in the order docs/development.md lists; split, its steps would only pass one another the processes to stop
func run() error {
	// When make (our parent) dies of the terminal's Ctrl-C, shut down like on SIGTERM.
	_ = setParentDeathSignal(syscall.SIGTERM)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	root, err := os.Getwd()
	if err != nil {
		return err
	}
	state := filepath.Join(root, ".podium-dev")
	if dir := os.Getenv("PODIUM_DEV_DIR"); dir != "" {
		state = dir // the tests run their own
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return errors.New("KUBEBUILDER_ASSETS is not set; run `make dev`")
	}
	if err := os.MkdirAll(filepath.Join(state, "etcd"), 0o700); err != nil {
		return err
	}
	lock, err := lockState(state)
	if err != nil {
		return err
	}
	defer lock.Close()
	httpAddr := os.Getenv("PODIUM_HTTP_ADDR")
	if httpAddr == "" {
		httpAddr = "127.0.0.1:8080"
	}
	if err := portFree(httpAddr, "PODIUM_HTTP_ADDR"); err != nil {
		return err
	}
	// The metrics endpoint as in a cluster (HTTPS, a token allowed to get /metrics).
	metricsAddr := os.Getenv("PODIUM_METRICS_ADDR")
	if metricsAddr == "" {
		metricsAddr = "127.0.0.1:8443"
	}
	if err := portFree(metricsAddr, "PODIUM_METRICS_ADDR"); err != nil {
		return err
	}
	saKey, saPub, err := serviceAccountKey(state)
	if err != nil {
		return fmt.Errorf("the ServiceAccount signing key: %w", err)
	}
	apiServer := &envtest.APIServer{}
	// A stable issuer and key: tokens minted before a restart keep working after it.
	apiServer.Configure().
		Set("service-account-issuer", "https://kubernetes.default.svc.cluster.local").
		Set("service-account-key-file", saPub).
		Set("service-account-signing-key-file", saKey)

	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		ControlPlane: envtest.ControlPlane{
			Etcd:      &envtest.Etcd{DataDir: filepath.Join(state, "etcd")},
			APIServer: apiServer,
		},
	}
	fmt.Println(">> starting kube-apiserver and etcd on 127.0.0.1 (data in .podium-dev/etcd)")
	if _, err := env.Start(); err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer func() {
		fmt.Println(">> stopping kube-apiserver and etcd")
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "podium-dev: stopping the control plane:", err)
		}
	}()

	admin, err := env.AddUser(envtest.User{Name: "podium-dev-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kcData, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(state, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kcData, 0o600); err != nil {
		return err
	}
	kubectl := filepath.Join(assets, "kubectl")

	fmt.Println(">> starting kube-controller-manager (log in .podium-dev/kube-controller-manager.log)")
	kcmLog, err := os.OpenFile(filepath.Join(state, "kube-controller-manager.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer kcmLog.Close()
	kcm, err := controllermanager.Start(ctx, controllermanager.Options{
		Binary:      controllermanager.BinaryIn(assets),
		Kubeconfig:  kubeconfig,
		Controllers: []string{"garbage-collector-controller", "namespace-controller", "serviceaccount-controller"},
		Output:      kcmLog,
	})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println(">> stopping kube-controller-manager")
		kcm.Stop()
	}()

	// The delivery webhook runs for real: the shipped configuration, pointing at the
	// operator on localhost, whose caBundle the operator writes.
	webhookAddr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	if err := installWebhook(ctx, env, webhookAddr); err != nil {
		return err
	}

	// The admission policies come first, as in install.yaml: the operator is not ready
	// until the apiserver admits rows through them (its admission probe).
	fmt.Println(">> applying the admission policies (config/admission)")
	if err := applyAll(ctx, kubectl, kubeconfig, [][]string{
		{"apply", "-k", filepath.Join(root, "config", "admission")},
		// Data kept from an earlier version may hold the three row policies that
		// config/admission/row_metadata.yaml replaced (docs/upgrading.md, "Upgrading from a
		// release with three row admission policies").
		{"delete", "mutatingadmissionpolicybinding,mutatingadmissionpolicy", "podium-row-created-by", "podium-row-updated-by",
			"podium-row-board-label", "podium-row-board-label-removal", "--ignore-not-found"},
		// ... and the two run policies config/admission/run_isolation.yaml replaced.
		{"delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", "podium-run-secret-binding", "podium-run-identity",
			"--ignore-not-found"},
		// The read tier's ServiceAccount and least-privilege role, as installed.
		{"apply", "-f", filepath.Join(root, "config", "read", "rbac.yaml")},
	}); err != nil {
		return err
	}
	operatorAddr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}
	readAddr, err := freeLoopbackAddr()
	if err != nil {
		return err
	}

	fmt.Println(">> starting podium-operator (the operator), HTTP API on", operatorAddr, "and the delivery webhook on", webhookAddr)
	sup := newSupervisor(filepath.Join(root, "bin", "podium-operator"),
		"--kubeconfig", kubeconfig,
		"--http-addr", operatorAddr,
		"--read-service-account", "system:serviceaccount:"+testenv.DeliveryNamespace+":"+readServiceAccount,
		"--metrics-bind-address", metricsAddr,
		"--health-probe-bind-address", "127.0.0.1:0",
		"--webhook-addr", webhookAddr,
		"--webhook-dns-names", "localhost",
		"--webhook-cert-secret", testenv.DeliveryNamespace+"/"+operator.DefaultCertSecretName,
		"--secret-value-namespace", testenv.DeliveryNamespace,
		"--admission-probe-namespace", testenv.DeliveryNamespace,
	)
	supCtx, stopSup := context.WithCancel(context.Background())
	supDone := make(chan error, 1)
	go func() { supDone <- sup.run(supCtx) }()
	defer func() {
		stopSup()
		sup.exited(<-supDone)
	}()
	if err := waitReady(ctx, "http://"+operatorAddr+"/readyz", supDone, sup.name); err != nil {
		return err
	}

	// The read tier as its own ServiceAccount (a token of podium-read, no admin
	// certificate): what it cannot do here, it cannot do in a cluster.
	readKC, err := readKubeconfig(ctx, env.Config, state)
	if err != nil {
		return fmt.Errorf("the read tier's kubeconfig: %w", err)
	}
	fmt.Println(">> starting podium-operator --role=read (the read tier, as podium-read) on", readAddr)
	readSup := newSupervisor(filepath.Join(root, "bin", "podium-operator"),
		"--role=read",
		"--kubeconfig", readKC,
		"--http-addr", readAddr,
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", "127.0.0.1:0",
		"--operator-url", "http://"+operatorAddr,
	)
	readSup.name = "podium-read"
	readDone := make(chan error, 1)
	go func() { readDone <- readSup.run(supCtx) }()
	defer func() {
		stopSup()
		readSup.exited(<-readDone)
	}()
	fmt.Println(">> serving both on", httpAddr, "(secrets and API-key paths to the operator, the rest to the read tier)")
	routerDone, err := serveRouter(supCtx, httpAddr, operatorAddr, readAddr)
	if err != nil {
		return err
	}
	base := "http://" + httpAddr
	if err := waitReady(ctx, base+"/readyz", readDone, readSup.name); err != nil {
		return err
	}
	fmt.Println(">> applying the org roles (config/rbac/org_roles.yaml) and config/samples")
	if err := applyAll(ctx, kubectl, kubeconfig, [][]string{
		{"apply", "-f", filepath.Join(root, "config", "rbac", "org_roles.yaml")},
		// Who may read /metrics (config/rbac/metrics_reader_role.yaml), granted to a
		// ServiceAccount whose token the dev admin mints (printed below).
		{"apply", "-f", filepath.Join(root, "config", "rbac", "metrics_reader_role.yaml"), "-f", filepath.Join(root, "hack", "dev", "metrics_reader.yaml")},
		{"apply", "-k", filepath.Join(root, "config", "samples")},
	}); err != nil {
		return err
	}

	fmt.Printf(`
Podium is running. Press Ctrl-C to stop everything.

  kubeconfig:  %[1]s
  kubectl:     %[2]s --kubeconfig %[1]s get podium -A
  HTTP API:    %[3]s (one address: secrets and API keys to the operator on %[7]s,
               everything else to the read tier on %[8]s, which runs as podium-read)
  try:         curl -s -X POST %[3]s/v1/leaderboard-read -H 'Content-Type: application/json' \
                 -d '{"package":"demo/terminal-bench","name":"main","page":1,"page_size":5}'
  web page:    %[3]s/leaderboards
  secrets:     curl -s %[3]s/v1/secrets -H "Authorization: Bearer $(%[2]s --kubeconfig %[1]s create token -n demo demo-runner)"
  CLI:         bin/podium --kubeconfig %[1]s hub leaderboard list
  metrics:     curl -sk https://%[4]s/metrics -H "Authorization: Bearer $(%[2]s --kubeconfig %[1]s create token -n %[5]s %[6]s)"

`, kubeconfig, kubectl, base, metricsAddr, testenv.DeliveryNamespace, devMetricsReader, operatorAddr, readAddr)

	select {
	case <-ctx.Done():
		return nil
	case err := <-supDone:
		supDone <- err // let the deferred stop see it
		return err
	case err := <-readDone:
		readDone <- err
		return err
	case err := <-routerDone:
		return fmt.Errorf("the local address %s stopped serving: %w", httpAddr, err)
	case <-kcm.Done():
		return fmt.Errorf("kube-controller-manager exited (see .podium-dev/kube-controller-manager.log): %w", kcm.Err())
	}
}

// devMetricsReader is the ServiceAccount (in the operator's namespace) that
// hack/dev/metrics_reader.yaml lets read /metrics.
const devMetricsReader = "podium-dev-metrics"

// freeLoopbackAddr returns a 127.0.0.1 address with a port free right now.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// installWebhook installs config/webhook's configuration pointing at
// https://localhost:<port> of addr, and the namespace of the webhook's certificate.
func installWebhook(ctx context.Context, env *envtest.Environment, addr string) error {
	c, err := client.New(env.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testenv.DeliveryNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
	}
	_, port, _ := net.SplitHostPort(addr)
	if err := testenv.InstallWebhook(ctx, c, "https://localhost:"+port); err != nil {
		return fmt.Errorf("installing the delivery webhook configuration: %w", err)
	}
	return nil
}

func portFree(addr, env string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s is in use (set %s to another address): %w", addr, env, err)
	}
	return l.Close()
}

func waitReady(ctx context.Context, url string, supDone chan error, name string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-supDone:
			supDone <- err
			return fmt.Errorf("%s could not be started: %w", name, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s was not ready at %s within 2 minutes", name, url)
}

// applyAll runs each kubectl command in turn, retrying one that fails for up to a minute:
// a kind or policy just created takes a few seconds to reach the apiserver's admission
// plugins (the row metadata policy answers 503 until then).
func applyAll(ctx context.Context, kubectl, kubeconfig string, commands [][]string) error {
	for _, args := range commands {
		for attempt := 1; ; attempt++ {
			apply := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...)
			apply.Stdout, apply.Stderr = os.Stdout, os.Stderr
			err := apply.Run()
			if err == nil {
				break
			}
			if attempt == 30 || ctx.Err() != nil {
				return fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
			}
			fmt.Println(">> retrying in 2 s")
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}
	return nil
}
