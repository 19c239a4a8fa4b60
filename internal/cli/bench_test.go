package cli_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/operator"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

// BenchmarkCLIRows times 20 `row create` calls of 500 rows each through the built CLI
// against the local control plane (with the operator running), beside `kubectl apply
// -f` of one file holding the same 10,000 rows. Run by hack/bench/40-cli.sh.
func BenchmarkCLIRows(b *testing.B) {
	batches, perBatch := 20, 500
	if v := os.Getenv("PODIUM_BENCH_BATCHES"); v != "" {
		if _, err := fmt.Sscan(v, &batches); err != nil {
			b.Fatalf("PODIUM_BENCH_BATCHES=%q: %v", v, err)
		}
	}
	env, cfg, err := testenv.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mgr, err := operator.NewManager(cfg, operator.Options{MetricsAddr: "0", ProbeAddr: "0"})
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("PODIUM_BENCH_NO_OPERATOR") == "" {
		go func() { _ = mgr.Start(ctx) }()
	}

	dir := b.TempDir()
	bin, run := benchCLI(b, env, cfg, dir)
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	newOrg := func(name string) string {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			b.Fatal(err)
		}
		ds := &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "bench"}}
		if err := c.Create(ctx, ds); err != nil {
			b.Fatal(err)
		}
		cfgFile := filepath.Join(dir, name+".yaml")
		run(bin, "hub", "leaderboard", "init", "--package", name+"/bench", "--name", "main", "--title", "Bench", "--output", cfgFile)
		run(bin, "hub", "leaderboard", "create", "--config", cfgFile)
		return name
	}

	var rows strings.Builder
	rows.WriteString("rows:\n")
	for i := range perBatch {
		fmt.Fprintf(&rows, "  - metadata: {agent: agent-%d}\n    metrics: {reward: %d}\n    trial_ids: [%s]\n", i, i, fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
	}
	rowsFile := filepath.Join(dir, "rows.yaml")
	if err := os.WriteFile(rowsFile, []byte(rows.String()), 0o644); err != nil {
		b.Fatal(err)
	}

	for b.Loop() {
		org := newOrg(fmt.Sprintf("cli-bench-%d", time.Now().UnixNano()))
		start := time.Now()
		for range batches {
			run(bin, "hub", "leaderboard", "row", "create", org+"/bench/main", "--config", rowsFile, "--quiet")
		}
		cli := time.Since(start)

		// The same 10,000 rows as one manifest file for kubectl.
		kOrg := newOrg(fmt.Sprintf("kubectl-bench-%d", time.Now().UnixNano()))
		var lb hubv1alpha1.LeaderboardList
		if err := c.List(ctx, &lb, client.InNamespace(kOrg)); err != nil || len(lb.Items) != 1 {
			b.Fatalf("board of %s: %v", kOrg, err)
		}
		board := lb.Items[0].Name
		var m strings.Builder
		for n := range batches * perBatch {
			i := n % perBatch
			fmt.Fprintf(&m, "---\napiVersion: hub.podium.dev/v1alpha1\nkind: LeaderboardRow\nmetadata:\n  name: %s-%05d\n  namespace: %s\n  labels: {hub.podium.dev/leaderboard: %s}\nspec:\n  leaderboard: %s\n  metadata: {agent: agent-%d}\n  metrics: {reward: %d}\n  trialIDs: [00000000-0000-4000-8000-%012d]\n",
				board, n, kOrg, board, board, i, i, i)
		}
		manifest := filepath.Join(dir, "rows-manifest.yaml")
		if err := os.WriteFile(manifest, []byte(m.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		kubectl, err := testenv.Kubectl()
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		run(kubectl, "apply", "-f", manifest)
		kt := time.Since(start)

		total := batches * perBatch
		b.ReportMetric(cli.Seconds(), "s-cli-20x500")
		b.ReportMetric(kt.Seconds(), "s-kubectl-apply-10000")
		fmt.Printf("podium row create, %d x %d rows: %.1fs (%.0f rows/s)\n", batches, perBatch, cli.Seconds(), float64(total)/cli.Seconds())
		fmt.Printf("kubectl apply -f of one file, %d rows: %.1fs (%.0f rows/s)\n", total, kt.Seconds(), float64(total)/kt.Seconds())
	}
}

// benchCLI returns the podium binary ($PODIUM_BIN/podium, or one built into dir) and a
// runner of commands (podium, kubectl) as a cluster admin of env, with their own
// kubeconfig and config directory in dir; a failing command fails b.
func benchCLI(b *testing.B, env *envtest.Environment, cfg *rest.Config, dir string) (bin string, run func(name string, args ...string)) {
	b.Helper()
	bin = filepath.Join(os.Getenv("PODIUM_BIN"), "podium")
	if os.Getenv("PODIUM_BIN") == "" {
		bin = filepath.Join(dir, "podium")
		build := exec.Command("go", "build", "-o", bin, "./cmd/podium")
		build.Dir = testenv.RepoRoot()
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("building podium: %v\n%s", err, out)
		}
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testenv.AdminKubeconfig(env, cfg, "bench-admin", kubeconfig); err != nil {
		b.Fatal(err)
	}
	return bin, func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
}
