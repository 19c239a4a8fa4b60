package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/controllers"
	"podium.dev/podium/internal/cli/hub"
	"podium.dev/podium/internal/rowwrite"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

// BenchmarkWriteRatio measures, in one run against one control plane, how fast rows
// written by users end up served by the public read with the whole operator running,
// against the floor of a row in the same run (docs/performance.md, "Rows in"):
//
//   - the ceiling: ConfigMaps carrying a row's bytes, created by 16 concurrent writers
//     (the CLI's own concurrency), and the same ConfigMaps through `kubectl apply -f`
//     (kubectl's ceiling: it applies one object after the other);
//   - `podium hub leaderboard row create` of N rows in files of 500, one command after
//     the other, until `GET /v1/leaderboards/<org>/<dataset>/<name>` reports all N;
//   - `kubectl apply -f` of the same N rows as one manifest, until the read reports them;
//   - the floor of a row, with no operator running: its create and one status write
//     through the shipped admission (the policies, and the shipped webhook
//     configuration answered by a webhook that only answers), by 16 writers (and with
//     kubectl apply for the creates, kubectl's floor); and the floor with a bare watcher
//     (an informer writing each new row's status as the creates go on): what any
//     operator adds to the floor, without anything of Podium's.
//
// Each of Podium's paths runs between two floors of its own, one right before and one
// right after it (the operator started for the path and stopped after it), and is
// compared with their mean: the apiserver slows down under sustained writes by itself,
// so only a floor measured next to the path is the ceiling the path had.
//
// It also prints how many writes and reads the apiserver took per row (its own request
// counter, every client included) and how often it called the row webhook.
// PODIUM_BENCH_WRITE_ROWS sets N (default 3,000); PODIUM_BENCH_PPROF=<dir> writes CPU
// profiles of the apiserver and of this process per phase. Run by
// hack/bench/25-write-ratio.sh.
func BenchmarkWriteRatio(b *testing.B) {
	n := 3000
	if v := os.Getenv("PODIUM_BENCH_WRITE_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 500 || n%500 != 0 {
			b.Fatalf("PODIUM_BENCH_WRITE_ROWS=%q: want a multiple of 500", v)
		}
	}
	const perFile = 500
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, cfg, err := testenv.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Stop() }()

	dir := b.TempDir()
	bin, run := benchCLI(b, env, cfg, dir)
	kubectl, err := testenv.Kubectl()
	if err != nil {
		b.Fatal(err)
	}
	wcfg := rest.CopyConfig(cfg)
	wcfg.QPS, wcfg.Burst = 5000, 10000
	c, err := client.New(wcfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	cpuAt := cpuNowFor(ctx, b, env, wcfg)
	apiHC, err := rest.HTTPClientFor(wcfg)
	if err != nil {
		b.Fatal(err)
	}
	// The floors write as Podium does: creates and status updates that ask for only the
	// metadata back (the CLI's create, the operator's status write; rowwrite).
	rw, err := rowwrite.New(wcfg, apiHC)
	if err != nil {
		b.Fatal(err)
	}
	apiMetrics := func() map[string]float64 {
		return requestCounts(ctx, b, apiHC, strings.TrimSuffix(wcfg.Host, "/")+"/metrics")
	}
	// The floors' admission is the shipped one: policies, and the webhook configuration
	// answered by a webhook that only answers.
	hook := startAnsweringWebhook(b)
	// The operator as deployed, started for each of Podium's paths and stopped after
	// it: it serves the admission webhooks (delivery, and the row webhook that records a
	// row's id and board in its create). Stopped, the webhook configuration is pointed
	// at the answering webhook again, for the floors.
	var op *testenv.Operator
	var stopOperator context.CancelFunc
	startOperator := func() {
		var opCtx context.Context
		opCtx, stopOperator = context.WithCancel(ctx)
		if op, err = testenv.StartOperatorWithDelivery(opCtx, cfg, 0); err != nil {
			b.Fatal(err)
		}
	}
	stopOp := func() {
		stopOperator()
		<-op.Done
		hook.install(ctx, b, c)
	}
	defer func() {
		if stopOperator != nil {
			stopOperator()
		}
	}()
	newOrg := func(prefix string) (org, board string) {
		org = fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: org}}); err != nil {
			b.Fatal(err)
		}
		if err := c.Create(ctx, &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "bench"}}); err != nil {
			b.Fatal(err)
		}
		cfgFile := filepath.Join(dir, org+".yaml")
		run(bin, "hub", "leaderboard", "init", "--package", org+"/bench", "--name", "main", "--title", "Bench", "--output", cfgFile)
		run(bin, "hub", "leaderboard", "create", "--config", cfgFile)
		var lbs hubv1alpha1.LeaderboardList
		if err := c.List(ctx, &lbs, client.InNamespace(org)); err != nil || len(lbs.Items) != 1 {
			b.Fatalf("board of %s: %v", org, err)
		}
		// Public, so that the anonymous read can count its rows.
		lb := &lbs.Items[0]
		if err := c.Patch(ctx, lb, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"visibility":"public"}}`))); err != nil {
			b.Fatal(err)
		}
		return org, lb.Name
	}
	// served waits until the public read of the board reports want rows.
	served := func(org string, want int) {
		url := op.BaseURL + "/v1/leaderboards/" + org + "/bench/main?page=1&page_size=1"
		deadline := time.Now().Add(10 * time.Minute)
		for {
			if total, err := readTotal(ctx, url); err == nil && total == want {
				return
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s: the read did not report %d rows within 10 minutes", org, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// clearRows deletes a phase's rows and waits until the read no longer serves them, so
	// that the next phase starts from the state the floors had.
	clearRows := func(org string) {
		if err := c.DeleteAllOf(ctx, &hubv1alpha1.LeaderboardRow{}, client.InNamespace(org)); err != nil {
			b.Fatal(err)
		}
		served(org, 0)
	}
	rowSpec := func(i int) (metadata, metrics, trial string) {
		return fmt.Sprintf("{agent: agent-%d}", i), fmt.Sprintf("{reward: %d}", i), fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	}
	applyFloor := func(manifest string) { run(kubectl, "apply", "-f", manifest) }
	// measure times one of Podium's paths, the operator running: write makes the path's
	// writes of org's n rows, and the path ends when the read serves them all. Then the
	// rows are deleted and the operator stopped, for the floor that follows.
	measure := func(org, phase string, profileSeconds int, write func()) pathCost {
		before, cpu0 := apiMetrics(), cpuAt()
		stopProfile := profileAPIServer(ctx, b, apiHC, wcfg.Host, phase, profileSeconds)
		start := time.Now()
		write()
		out := pathCost{done: time.Since(start)}
		served(org, n)
		out.rate = float64(n) / time.Since(start).Seconds()
		stopProfile()
		out.writes = writesPer(before, apiMetrics(), "leaderboardrows", n)
		out.cpu = cpuAt().per(cpu0, n)
		out.bytes = storedBytes(ctx, b, c, org)
		clearRows(org)
		stopOp()
		return out
	}

	for b.Loop() {
		// The ceiling: ConfigMaps holding what a row holds, 16 writers.
		cmOrg := testenv.Namespace("cm-bench")
		if err := c.Create(ctx, cmOrg); err != nil {
			b.Fatal(err)
		}
		before, cpu0 := apiMetrics(), cpuAt()
		start := time.Now()
		parallel(b, n, 16, func(i int) error {
			md, mt, tr := rowSpec(i)
			return c.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: cmOrg.Name, GenerateName: "main-",
					Labels: map[string]string{hubv1alpha1.LabelLeaderboard: "main"}},
				Data: map[string]string{"leaderboard": "main", "metadata": md, "metrics": mt, "trialIDs": tr},
			})
		})
		cmRate := float64(n) / time.Since(start).Seconds()
		cmWrites := writesPer(before, apiMetrics(), "configmaps", n)
		cmCPUAfter := cpuAt()
		cmCPU := cmCPUAfter.per(cpu0, n)
		cmTotal := cmCPUAfter.total(cpu0)

		// kubectl's ceiling: the same ConfigMaps through kubectl apply.
		var m strings.Builder
		for i := range n {
			md, mt, tr := rowSpec(i)
			fmt.Fprintf(&m, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: main-%05d\n  namespace: %s\n  labels: {hub.podium.dev/leaderboard: main}\ndata:\n  leaderboard: main\n  metadata: %q\n  metrics: %q\n  trialIDs: %q\n", i, cmOrg.Name, md, mt, tr)
		}
		cmManifest := filepath.Join(dir, "cm-manifest.yaml")
		if err := os.WriteFile(cmManifest, []byte(m.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		cpu0 = cpuAt()
		start = time.Now()
		run(kubectl, "apply", "-f", cmManifest)
		kubectlCMRate := float64(n) / time.Since(start).Seconds()
		kubectlCMCPU := cpuAt().per(cpu0, n)
		// Every phase starts from the apiserver the floors ran against: no objects of
		// an earlier phase left in it (its watch cache, its heap) or in the operator.
		if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(cmOrg.Name)); err != nil {
			b.Fatal(err)
		}

		// Each of Podium's paths is measured between two floors of its own, one right
		// before it and one right after it, and compared with their mean: the apiserver
		// gets slower under sustained writes by itself (docs/performance.md, "Rows in"),
		// so a floor measured at another point of the run is another apiserver's.
		//
		// The CLI's path, between the bare watcher and the 16-writer floor on each side
		// (the bare watcher, then the floor; the floor, then the bare watcher), no operator
		// running during them: what any operator adds to the floor, without anything of
		// Podium's (no webhook, no ledger, no validation against a stored board, no read).
		var watched [2]watchedCost
		var floor [3]floorCost
		hook.install(ctx, b, c)
		stopProfile := profileAPIServer(ctx, b, apiHC, wcfg.Host, "watched", 6)
		watched[0] = watchedFloor(ctx, b, wcfg, c, rw, cpuAt, n)
		stopProfile()
		stopProfile = profileAPIServer(ctx, b, apiHC, wcfg.Host, "floor", 5)
		floor[0] = rowFloor(ctx, b, c, rw, cpuAt, n)
		stopProfile()

		// podium row create, files of 500, until served.
		startOperator()
		org, _ := newOrg("cli-ratio")
		var rows strings.Builder
		rows.WriteString("rows:\n")
		for i := range perFile {
			md, mt, tr := rowSpec(i)
			fmt.Fprintf(&rows, "  - metadata: %s\n    metrics: %s\n    trial_ids: [%s]\n", md, mt, tr)
		}
		rowsFile := filepath.Join(dir, "rows.yaml")
		if err := os.WriteFile(rowsFile, []byte(rows.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		cli := measure(org, "cli", 8, func() {
			for range n / perFile {
				run(bin, "hub", "leaderboard", "row", "create", org+"/bench/main", "--config", rowsFile, "--quiet")
			}
		})

		floor[1] = rowFloor(ctx, b, c, rw, cpuAt, n)

		// The same commands as an org owner's ServiceAccount (podium-org-owner, no
		// restore verb), as a harness in a Pod of the org would run them, between the
		// floor above and one more: such a user's rows are sent to the row webhook for a
		// new id, where the cluster admin's above take theirs through a ledger.
		startOperator()
		oOrg, _ := newOrg("owner-ratio")
		ownerKubeconfig := ownerConfig(ctx, b, cfg, oOrg, filepath.Join(dir, "owner-kubeconfig"))
		owner := measure(oOrg, "owner", 8, func() {
			for range n / perFile {
				run(bin, "--kubeconfig", ownerKubeconfig, "hub", "leaderboard", "row", "create", oOrg+"/bench/main", "--config", rowsFile, "--quiet")
			}
		})

		floor[2] = rowFloor(ctx, b, c, rw, cpuAt, n)
		watched[1] = watchedFloor(ctx, b, wcfg, c, rw, cpuAt, n)

		// kubectl's path, between two floors of its own: `kubectl apply -f` of the
		// manifest the kubectl run applies, then one status update per row by 16 writers.
		var kFloor [2]floorCost
		stopProfile = profileAPIServer(ctx, b, apiHC, wcfg.Host, "kfloor", 12)
		kFloor[0] = kubectlFloor(ctx, b, c, rw, cpuAt, applyFloor, dir, n)
		stopProfile()

		// kubectl apply -f of the same rows, until served.
		startOperator()
		kOrg, board := newOrg("kubectl-ratio")
		m.Reset()
		for i := range n {
			md, mt, tr := rowSpec(i)
			fmt.Fprintf(&m, "---\napiVersion: hub.podium.dev/v1alpha1\nkind: LeaderboardRow\nmetadata:\n  name: %s-%05d\n  namespace: %s\nspec:\n  leaderboard: %s\n  metadata: %s\n  metrics: %s\n  trialIDs: [%s]\n", board, i, kOrg, board, md, mt, tr)
		}
		manifest := filepath.Join(dir, "rows-manifest.yaml")
		if err := os.WriteFile(manifest, []byte(m.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		kube := measure(kOrg, "kubectl", 15, func() { run(kubectl, "apply", "-f", manifest) })

		kFloor[1] = kubectlFloor(ctx, b, c, rw, cpuAt, applyFloor, dir, n)

		floorRate := (floor[0].rate() + floor[1].rate()) / 2
		kFloorRate := (kFloor[0].rate() + kFloor[1].rate()) / 2
		watchedRate := (watched[0].rate + watched[1].rate) / 2

		b.ReportMetric(cli.rate/cmRate*100, "%cli-of-ceiling")
		b.ReportMetric(kube.rate/kubectlCMRate*100, "%kubectl-of-ceiling")
		b.ReportMetric(cli.rate/floorRate*100, "%cli-of-floor")
		b.ReportMetric(kube.rate/kFloorRate*100, "%kubectl-of-floor")
		fmt.Printf("write-ratio: ceiling: %d ConfigMaps of a row's bytes, 16 writers: %.0f objects/s (%s; %s)\n", n, cmRate, cmWrites, cmCPU)
		fmt.Printf("write-ratio: the floor of a row, no operator (before the CLI's path): creates %.0f/s (%s), status updates %.0f/s (%s): CPU of both = %.1fx a ConfigMap create's, so rows served at most %.0f%% of the ceiling on CPU alone\n",
			floor[0].createRate, floor[0].createCPU, floor[0].statusRate, floor[0].statusCPU, floor[0].total/cmTotal, cmTotal/floor[0].total*100)
		fmt.Printf("write-ratio: the floor with a bare watcher writing each status (what any operator adds, nothing of Podium's), before the CLI's path: %.0f rows/s = %.0f%% of the floor after it (%s)\n",
			watched[0].rate, watched[0].rate/floor[0].rate()*100, watched[0].cpu)
		fmt.Printf("write-ratio: the floors around the CLI's path: %.1f rows/s before, %.1f after (16 writers); the bare watcher %.1f before, %.1f after\n",
			floor[0].rate(), floor[1].rate(), watched[0].rate, watched[1].rate)
		ownerFloor := (floor[1].rate() + floor[2].rate()) / 2
		fmt.Printf("write-ratio: podium row create as an org owner's ServiceAccount (no restore verb), %d x %d rows, served by the read: %.0f rows/s = %.0f%% of its floors (%.1f before, %.1f after; %s; %s)\n",
			n/perFile, perFile, owner.rate, owner.rate/ownerFloor*100, floor[1].rate(), floor[2].rate(), owner.writes, owner.cpu)
		fmt.Printf("write-ratio: a stored row, status written: %d bytes on the floor, %d on the CLI's path; %d on kubectl's floor, %d on kubectl's path\n",
			floor[0].bytes, cli.bytes, kFloor[0].bytes, kube.bytes)
		fmt.Printf("write-ratio: podium row create, %d x %d rows, served by the read: %.0f rows/s = %.0f%% of the ceiling (commands done after %.1fs, served after %.1fs; %s; %s)\n",
			n/perFile, perFile, cli.rate, cli.rate/cmRate*100, cli.done.Seconds(), float64(n)/cli.rate, cli.writes, cli.cpu)
		fmt.Printf("write-ratio: kubectl's ceiling: kubectl apply -f of the %d ConfigMaps: %.0f objects/s (%s)\n", n, kubectlCMRate, kubectlCMCPU)
		fmt.Printf("write-ratio: kubectl's floor, no operator (before kubectl's path): kubectl apply -f of the rows %.0f/s (%s), status updates %.0f/s (%s)\n",
			kFloor[0].createRate, kFloor[0].createCPU, kFloor[0].statusRate, kFloor[0].statusCPU)
		fmt.Printf("write-ratio: kubectl's floors around kubectl's path: %.1f rows/s before, %.1f after\n", kFloor[0].rate(), kFloor[1].rate())
		fmt.Printf("write-ratio: kubectl apply -f of %d rows, served by the read: %.0f rows/s = %.0f%% of kubectl's ceiling, %.0f%% of the 16-writer ceiling (apply done after %.1fs, served after %.1fs; %s; %s)\n",
			n, kube.rate, kube.rate/kubectlCMRate*100, kube.rate/cmRate*100, kube.done.Seconds(), float64(n)/kube.rate, kube.writes, kube.cpu)
		// The figures the issue asks for (docs/performance.md, "Rows in"): raw creates,
		// the floor (a create and one status write per row through the shipped admission,
		// no operator; the mean of the floors right before and right after the path),
		// Podium's path until served, and its ratio to the floor.
		fmt.Printf("write-ratio: summary: raw creates %.0f rows/s (16 writers), %.0f rows/s (kubectl apply); floor %.1f rows/s (16 writers), %.1f rows/s (kubectl apply, then 16 status writers); podium: CLI %.1f rows/s served = %.0f%% of the floor, kubectl apply %.1f rows/s served = %.0f%% of kubectl's floor; the floor with a bare watcher %.1f rows/s = %.0f%% of the floor (the CLI path = %.0f%% of it)\n",
			floor[0].createRate, kFloor[0].createRate, floorRate, kFloorRate, cli.rate, cli.rate/floorRate*100, kube.rate, kube.rate/kFloorRate*100,
			watchedRate, watchedRate/floorRate*100, cli.rate/watchedRate*100)
	}
}

func cpuNowFor(ctx context.Context, b *testing.B, env *envtest.Environment, cfg *rest.Config) func() cpu {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return func() cpu {
		return cpuNow(ctx, b, hc, strings.TrimSuffix(cfg.Host, "/")+"/metrics", env.ControlPlane.Etcd.URL.String()+"/metrics")
	}
}

// floorCost is what rowFloor measured.
type floorCost struct {
	createRate, statusRate float64
	createCPU, statusCPU   string
	// total is all CPU seconds of both phases.
	total float64
	// took is the time of both phases.
	took time.Duration
	n    int
	// bytes is a stored row's mean size, status written (storedBytes).
	bytes int
}

// rate is the floor: rows per second through both writes, one phase after the other.
func (f floorCost) rate() float64 { return float64(f.n) / f.took.Seconds() }

// writeStatus writes each row the status update the operator writes for a valid row
// (controllers.RowStatus: id, observed generation and values, trial links, the Valid
// and Ready conditions), by 16 writers, as the operator writes it: an update at the
// row's resourceVersion that asks for only the metadata back (rowwrite). Schemas are
// not read: a board with none, which every row matches.
func writeStatus(ctx context.Context, b *testing.B, rw *rowwrite.Client, rows []*hubv1alpha1.LeaderboardRow) {
	parallel(b, len(rows), 16, func(i int) error { return statusOf(ctx, rw, rows[i]) })
}

// statusOf writes row the status writeStatus writes.
func statusOf(ctx context.Context, rw *rowwrite.Client, row *hubv1alpha1.LeaderboardRow) error {
	lb := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{Name: row.Spec.Leaderboard, Generation: 1}}
	row.ManagedFields = nil // as the operator's cache holds rows
	row.Status = controllers.RowStatus(row, lb, time.Now())
	return rw.UpdateStatus(ctx, row)
}

// kubectlFloor is rowFloor for rows applied with `kubectl apply -f` (one manifest of n
// rows, as the kubectl run applies them), then given one status update each by 16
// writers; no operator runs.
func kubectlFloor(ctx context.Context, b *testing.B, c client.Client, rw *rowwrite.Client, cpuAt func() cpu, apply func(manifest string), dir string, n int) floorCost {
	ns := testenv.Namespace("kfloor")
	if err := c.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	// The manifest of kubectl's path: rows named and pointed at a board named as there.
	board := floorBoard(ctx, b, c, ns.Name).Name
	var m strings.Builder
	for i := range n {
		fmt.Fprintf(&m, "---\napiVersion: hub.podium.dev/v1alpha1\nkind: LeaderboardRow\nmetadata:\n  name: %s-%05d\n  namespace: %s\nspec:\n  leaderboard: %s\n  metadata: {agent: agent-%d}\n  metrics: {reward: %d}\n  trialIDs: [\"00000000-0000-4000-8000-%012d\"]\n", board, i, ns.Name, board, i, i, i)
	}
	manifest := filepath.Join(dir, "floor-manifest.yaml")
	if err := os.WriteFile(manifest, []byte(m.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	out := floorCost{n: n}
	cpu0 := cpuAt()
	start := time.Now()
	apply(manifest)
	created := time.Since(start)
	out.createRate = float64(n) / created.Seconds()
	cpu1 := cpuAt()
	out.createCPU = cpu1.per(cpu0, n)
	list := &hubv1alpha1.LeaderboardRowList{}
	if err := c.List(ctx, list, client.InNamespace(ns.Name)); err != nil || len(list.Items) != n {
		b.Fatalf("kubectl floor rows: %d, %v", len(list.Items), err)
	}
	rows := make([]*hubv1alpha1.LeaderboardRow, n)
	for i := range list.Items {
		rows[i] = &list.Items[i]
	}
	cpu1 = cpuAt()
	start = time.Now()
	writeStatus(ctx, b, rw, rows)
	wrote := time.Since(start)
	out.statusRate = float64(n) / wrote.Seconds()
	cpu2 := cpuAt()
	out.statusCPU = cpu2.per(cpu1, n)
	out.total = cpu2.total(cpu0)
	out.bytes = storedBytes(ctx, b, c, ns.Name)
	out.took = created + wrote
	if err := c.DeleteAllOf(ctx, &hubv1alpha1.LeaderboardRow{}, client.InNamespace(ns.Name)); err != nil {
		b.Fatal(err)
	}
	return out
}

// watchedFloor creates n rows by 16 writers while a bare watcher in this process (an
// informer of rows, managed fields stripped as the operator's cache does, and 16
// workers) writes each new row the status writeStatus writes: the floor's two writes,
// plus what any operator must do to learn of a row and write its status, and nothing
// Podium adds (webhook, ledger, validation against a stored board, the public read).
// It returns the rate until every row has its status, and the CPU per row.
func watchedFloor(ctx context.Context, b *testing.B, cfg *rest.Config, c client.Client, rw *rowwrite.Client, cpuAt func() cpu, n int) watchedCost {
	ns := testenv.Namespace("wfloor")
	if err := c.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	lb := floorBoard(ctx, b, c, ns.Name)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	informer, err := crcache.New(cfg, crcache.Options{Scheme: scheme.Scheme, DefaultNamespaces: map[string]crcache.Config{ns.Name: {}},
		DefaultTransform: crcache.TransformStripManagedFields()})
	if err != nil {
		b.Fatal(err)
	}
	inf, err := informer.GetInformer(wctx, &hubv1alpha1.LeaderboardRow{})
	if err != nil {
		b.Fatal(err)
	}
	queue := make(chan *hubv1alpha1.LeaderboardRow, n)
	var written atomic.Int64
	done := make(chan struct{})
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			if r, ok := o.(*hubv1alpha1.LeaderboardRow); ok && r.Status.ID == "" {
				queue <- r.DeepCopy()
			}
		},
		UpdateFunc: func(_, o any) {
			if r, ok := o.(*hubv1alpha1.LeaderboardRow); ok && r.Status.ID != "" && written.Add(1) == int64(n) {
				close(done)
			}
		},
	}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = informer.Start(wctx) }()
	if !informer.WaitForCacheSync(wctx) {
		b.Fatal("watched floor: the informer did not sync")
	}
	var workers sync.WaitGroup
	for range 16 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for {
				select {
				case <-wctx.Done():
					return
				case r := <-queue:
					if err := statusOf(wctx, rw, r); err != nil && wctx.Err() == nil {
						b.Error(err)
					}
				}
			}
		}()
	}
	cpu0 := cpuAt()
	start := time.Now()
	parallel(b, n, 16, func(i int) error { return rw.Create(ctx, floorRow(lb, i)) })
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		b.Fatalf("watched floor: %d of %d statuses written in 10 minutes", written.Load(), n)
	}
	rate := float64(n) / time.Since(start).Seconds()
	cpu1 := cpuAt()
	stop()
	workers.Wait()
	if err := c.DeleteAllOf(ctx, &hubv1alpha1.LeaderboardRow{}, client.InNamespace(ns.Name)); err != nil {
		b.Fatal(err)
	}
	return watchedCost{rate: rate, cpu: cpu1.per(cpu0, n)}
}

// watchedCost is what watchedFloor measured: rows per second until every row has its
// status, and the CPU per row.
type watchedCost struct {
	rate float64
	cpu  string
}

// floorRow is the i-th row the floors create for board lb: the object the CLI creates
// for the i-th row of the CLI's path (hub.NewRow: the same spec, the board's label and
// controller reference, the CLI's change time), so that the floor writes the bytes the
// CLI writes. The 16-writer floor and the floor with a bare watcher both write it.
func floorRow(lb *hubv1alpha1.Leaderboard, i int) *hubv1alpha1.LeaderboardRow {
	trials := []string{fmt.Sprintf("00000000-0000-4000-8000-%012d", i)}
	return hub.NewRow(lb, hub.RowSpecFromFile(lb.Name, &hub.RowFile{
		Metadata: json.RawMessage(fmt.Sprintf(`{"agent":"agent-%d"}`, i)),
		Metrics:  json.RawMessage(fmt.Sprintf(`{"reward":%d}`, i)),
		TrialIDs: &trials,
	}), time.Now())
}

// floorBoard stores, in namespace ns, the board the floors' rows belong to, named as the
// CLI names a board (hub.BoardObjectName), so that the rows' label, owner reference and
// generated names are as long as on the CLI's path. No operator reconciles it.
func floorBoard(ctx context.Context, b *testing.B, c client.Client, ns string) *hubv1alpha1.Leaderboard {
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: hub.BoardObjectName(ns+"/bench", "main")},
		Spec:       hubv1alpha1.LeaderboardSpec{Package: ns + "/bench", Name: "main", Title: "Bench"},
	}
	if err := c.Create(ctx, lb); err != nil {
		b.Fatal(err)
	}
	return lb
}

// rowFloor creates n rows by 16 writers with no operator running (the admission
// policies of config/admission do run), then writes each the status update the
// operator writes for a valid row (writeStatus): the two writes every row costs.
func rowFloor(ctx context.Context, b *testing.B, c client.Client, rw *rowwrite.Client, cpuAt func() cpu, n int) floorCost {
	ns := testenv.Namespace("floor")
	if err := c.Create(ctx, ns); err != nil {
		b.Fatal(err)
	}
	lb := floorBoard(ctx, b, c, ns.Name)
	rows := make([]*hubv1alpha1.LeaderboardRow, n)
	out := floorCost{n: n}
	cpu0 := cpuAt()
	start := time.Now()
	parallel(b, n, 16, func(i int) error {
		rows[i] = floorRow(lb, i)
		return rw.Create(ctx, rows[i])
	})
	created := time.Since(start)
	out.createRate = float64(n) / created.Seconds()
	cpu1 := cpuAt()
	out.createCPU = cpu1.per(cpu0, n)
	start = time.Now()
	writeStatus(ctx, b, rw, rows)
	wrote := time.Since(start)
	out.took = created + wrote
	out.statusRate = float64(n) / wrote.Seconds()
	cpu2 := cpuAt()
	out.statusCPU = cpu2.per(cpu1, n)
	out.total = cpu2.total(cpu0)
	out.bytes = storedBytes(ctx, b, c, ns.Name)
	// Gone before the operator starts (no namespace controller runs here to empty the
	// namespace): it would otherwise reconcile them during the runs that follow.
	if err := c.DeleteAllOf(ctx, &hubv1alpha1.LeaderboardRow{}, client.InNamespace(ns.Name)); err != nil {
		b.Fatal(err)
	}
	return out
}

// cpu is the CPU time, in seconds, each part of the bench has used so far: the
// apiserver and etcd (their process_cpu_seconds_total), this process (the operator
// and the bench's own writers and poller), and the commands it ran and waited for
// (the CLI, kubectl). CPU seconds per object say where the work goes whatever else
// the machine runs, which rates alone cannot.
type cpu struct{ apiserver, etcd, self, children float64 }

func cpuNow(ctx context.Context, b *testing.B, apiserver *http.Client, apiURL, etcdURL string) cpu {
	var self, children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		b.Fatal(err)
	}
	secs := func(r syscall.Rusage) float64 {
		return float64(r.Utime.Sec+r.Stime.Sec) + float64(r.Utime.Usec+r.Stime.Usec)/1e6
	}
	return cpu{
		apiserver: processCPU(ctx, b, apiserver, apiURL),
		etcd:      processCPU(ctx, b, http.DefaultClient, etcdURL),
		self:      secs(self),
		children:  secs(children),
	}
}

// total is all CPU seconds used since before.
func (c cpu) total(before cpu) float64 {
	return c.apiserver - before.apiserver + c.etcd - before.etcd + c.self - before.self + c.children - before.children
}

func (c cpu) per(before cpu, n int) string {
	k := 1000 / float64(n)
	return fmt.Sprintf("CPU s per 1,000: apiserver %.1f, etcd %.1f, operator+bench %.1f, commands %.1f",
		(c.apiserver-before.apiserver)*k, (c.etcd-before.etcd)*k, (c.self-before.self)*k, (c.children-before.children)*k)
}

// processCPU reads process_cpu_seconds_total from a /metrics endpoint.
func processCPU(ctx context.Context, b *testing.B, hc *http.Client, url string) float64 {
	cpu := -1.0
	metricLines(ctx, b, hc, url, func(line string) {
		if v, ok := strings.CutPrefix(line, "process_cpu_seconds_total "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			cpu = f
		}
	})
	if cpu < 0 {
		b.Fatalf("%s: no process_cpu_seconds_total", url)
	}
	return cpu
}

// metricLines calls each with every line of the Prometheus text a /metrics endpoint
// answers.
func metricLines(ctx context.Context, b *testing.B, hc *http.Client, url string, each func(line string)) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		each(sc.Text())
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
}

// parallel runs do(0..n-1) on workers goroutines and fails b on the first error.
func parallel(b *testing.B, n, workers int, do func(i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var first atomic.Value
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || first.Load() != nil {
					return
				}
				if err := do(i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		b.Fatal(err)
	}
}

// readTotal returns pagination.total of a GET read.
func readTotal(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s", resp.Status)
	}
	var body struct {
		Pagination struct {
			Total int `json:"total"`
		} `json:"pagination"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, err
	}
	return body.Pagination.Total, nil
}

// requestCounts reads the apiserver's apiserver_request_total counter of mutating
// requests (from its /metrics at url), keyed "VERB resource[/subresource]", and its calls
// of the row webhook (apiserver_admission_webhook_request_total), keyed "CALL
// webhook/rows.identity".
func requestCounts(ctx context.Context, b *testing.B, hc *http.Client, url string) map[string]float64 {
	out := map[string]float64{}
	metricLines(ctx, b, hc, url, func(line string) {
		if rest, ok := strings.CutPrefix(line, "apiserver_admission_webhook_request_total{"); ok {
			// Calls of the row webhook: "WEBHOOK rows.identity".
			labels, value, _ := strings.Cut(rest, "} ")
			if l := promLabels(labels); strings.HasPrefix(l["name"], "rows.identity.") {
				if v, err := strconv.ParseFloat(value, 64); err == nil {
					out["CALL webhook/rows.identity"] += v
				}
			}
			return
		}
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			return
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			return
		}
		l := promLabels(labels)
		switch l["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY":
		case "GET", "LIST":
			// Reads, every resource: counted apart ("READ GET resource").
			l["verb"] = "READ " + l["verb"]
		default:
			return
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return
		}
		out[key] += v
	})
	return out
}

func promLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		k, rest, ok := strings.Cut(s, `="`)
		if !ok {
			break
		}
		v, rest, _ := strings.Cut(rest, `"`)
		out[k] = v
		s = strings.TrimPrefix(rest, ",")
	}
	return out
}

// writesPer says how many mutating requests on resource (and its subresources) the
// apiserver took per object between two counter readings.
func writesPer(before, after map[string]float64, resource string, n int) string {
	var parts, others, reads []string
	total := 0.0
	for k, v := range after {
		d := v - before[k]
		if d <= 0 {
			continue
		}
		if r, ok := strings.CutPrefix(k, "READ "); ok {
			reads = append(reads, fmt.Sprintf("%s %.3f", r, d/float64(n)))
			continue
		}
		verb, res, _ := strings.Cut(k, " ")
		if verb == "CALL" {
			others = append(others, fmt.Sprintf("%s %.3f", res, d/float64(n)))
			continue
		}
		if res != resource && !strings.HasPrefix(res, resource+"/") {
			// Every other write in the phase (the boards' status, events, leases,
			// the CLI's own), per object too: part of what a row costs.
			others = append(others, fmt.Sprintf("%s %.3f", k, d/float64(n)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", k, d/float64(n)))
		total += d
	}
	sort.Strings(parts)
	sort.Strings(others)
	sort.Strings(reads)
	return fmt.Sprintf("%.2f writes per object: %s; other writes per object: %s; reads per object: %s", total/float64(n), strings.Join(parts, ", "), strings.Join(others, ", "), strings.Join(reads, ", "))
}

// profileAPIServer, when PODIUM_BENCH_PPROF names a directory, takes a CPU profile of
// the apiserver (its /debug/pprof/profile) for the given seconds from now, written to
// apiserver-<phase>.pprof there: where a row's apiserver time goes in that phase (go
// tool pprof -top); and one of this process (the operator and the bench's writers) for
// the same seconds, operator-<phase>.pprof. The returned function waits for both.
func profileAPIServer(ctx context.Context, b *testing.B, hc *http.Client, host, phase string, seconds int) func() {
	dir := os.Getenv("PODIUM_BENCH_PPROF")
	if dir == "" {
		return func() {}
	}
	// This process too (the operator, the bench's writers and its poller), for the
	// same seconds.
	local, err := os.Create(filepath.Join(dir, "operator-"+phase+".pprof"))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(local); err != nil {
		b.Fatal(err)
	}
	stopLocal := time.AfterFunc(time.Duration(seconds)*time.Second, func() { pprof.StopCPUProfile(); _ = local.Close() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(host, "/")+fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds), nil)
		if err != nil {
			b.Error(err)
			return
		}
		resp, err := hc.Do(req)
		if err != nil {
			b.Error(err)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		f, err := os.Create(filepath.Join(dir, "apiserver-"+phase+".pprof"))
		if err != nil {
			b.Error(err)
			return
		}
		defer func() { _ = f.Close() }()
		if _, err := io.Copy(f, resp.Body); err != nil {
			b.Error(err)
		}
	}()
	return func() {
		<-done
		if stopLocal.Stop() { // stopped before the 20 seconds were up
			pprof.StopCPUProfile()
			_ = local.Close()
		}
	}
}

// answeringWebhook is a webhook that only answers: it allows every admission review sent
// to it, with no patch, over TLS on 127.0.0.1 (HTTP/1.1, as the operator's webhook
// server). The floors run with the shipped webhook configuration pointed at it: the
// admission a row goes through is the shipped one (its match conditions evaluated, a
// row that matches sent and answered), and only the work of Podium's webhook is left
// to Podium's paths.
type answeringWebhook struct {
	srv   *httptest.Server
	calls atomic.Int64
}

func startAnsweringWebhook(b *testing.B) *answeringWebhook {
	w := &answeringWebhook{}
	w.srv = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.calls.Add(1)
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(rw, "not an admission review", http.StatusBadRequest)
			return
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(&review)
	}))
	b.Cleanup(w.srv.Close)
	return w
}

// install points the shipped webhook configuration at w and waits until the apiserver
// sends it a row's create (a dry run of a row without a controller, which the row
// webhook's match condition sends).
func (w *answeringWebhook) install(ctx context.Context, b *testing.B, c client.Client) {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.srv.Certificate().Raw})
	if err := testenv.InstallWebhookAt(ctx, c, w.srv.URL, ca); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for before := w.calls.Load(); w.calls.Load() == before; {
		probe := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "probe-"},
			Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "probe"}}
		_ = c.Create(ctx, probe, client.DryRunAll) // the row is sent before it is validated
		if time.Now().After(deadline) {
			b.Fatal("the answering webhook was not called within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// storedBytes is the mean size, in bytes of JSON, of the rows of namespace ns as the
// apiserver serves them (managed fields included): whether a floor's rows and a path's
// are the same bytes.
func storedBytes(ctx context.Context, b *testing.B, c client.Client, ns string) int {
	list := &hubv1alpha1.LeaderboardRowList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	if len(list.Items) == 0 {
		return 0
	}
	total := 0
	for i := range list.Items {
		raw, err := json.Marshal(&list.Items[i])
		if err != nil {
			b.Fatal(err)
		}
		total += len(raw)
	}
	return total / len(list.Items)
}

// ownerConfig gives a ServiceAccount of org the ClusterRole podium-org-owner there (the
// org roles applied first, as shipped), writes a kubeconfig with its token to path, and
// waits until the authorizer lets it create rows in org.
func ownerConfig(ctx context.Context, b *testing.B, cfg *rest.Config, org, path string) string {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := testenv.ApplyOrgRoles(ctx, cs); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	token, err := testenv.ServiceAccountToken(ctx, cs, org, "harness", "podium-org-owner")
	if err != nil {
		b.Fatal(err)
	}
	if err := testenv.WriteTokenKubeconfig(cfg, token, org, path); err != nil {
		b.Fatal(err)
	}
	owner, err := testenv.ClientsetAs(cfg, token, nil)
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if ok, err := testenv.Allowed(ctx, owner, org, "create", hubv1alpha1.GroupVersion.Group, "leaderboardrows"); err == nil && ok {
			return path
		}
		if time.Now().After(deadline) {
			b.Fatal("the org owner's ServiceAccount may not create rows after a minute")
		}
	}
}

// pathCost is what measure measured of one of Podium's paths: rows per second until
// served, the time its writes took, the writes and CPU per row, a stored row's size.
type pathCost struct {
	rate   float64
	done   time.Duration
	writes string
	cpu    string
	bytes  int
}
