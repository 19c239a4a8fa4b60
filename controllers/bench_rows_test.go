//go:build bench

package controllers_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

// TestBenchRowsValid measures the wall time from creating PODIUM_BENCH_ROWS rows
// (default 10,000) to every one of them being Valid and in the board's rank index, on
// the local control plane. hack/bench/20-rows-valid.sh runs it.
func TestBenchRowsValid(t *testing.T) {
	n := 10000
	if s := os.Getenv("PODIUM_BENCH_ROWS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("PODIUM_BENCH_ROWS=%q: want a positive number", s)
		}
	}
	// Count the controllers' requests: the figure says whether any write is wasted.
	var requests sync.Map // "VERB resource" -> *atomic.Int64
	c := benchManager(t, func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if !strings.Contains(req.URL.RawQuery, "watch=true") {
				// /apis/<group>/<version>/namespaces/<ns>/<resource>[/<name>[/status]]
				segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
				key := req.Method + " " + req.URL.Path
				if len(segs) >= 6 && segs[3] == "namespaces" {
					key = req.Method + " " + strings.Join(append([]string{segs[5]}, segs[min(len(segs), 7):]...), "/")
				}
				v, _ := requests.LoadOrStore(key, new(atomic.Int64))
				v.(*atomic.Int64).Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	ns := testenv.Namespace("bench")
	must(t, c.Create(ctx, ns))
	ds := &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "ds"}}
	must(t, c.Create(ctx, ds))
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "board"},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package: ns.Name + "/ds", Name: "board", Title: "Bench",
			MetricsSchema: rawJSON(`{"type":"object","required":["reward"],"properties":{"reward":{"type":"number"},"cost":{"type":"number"}}}`),
			RankBy: []hubv1alpha1.RankRule{
				{Accessor: "metrics.reward", Direction: hubv1alpha1.Descending},
				{Accessor: "metrics.cost", Direction: hubv1alpha1.Ascending},
			},
		},
	}
	must(t, c.Create(ctx, lb))
	waitFor(t, 60*time.Second, func() bool {
		got := &hubv1alpha1.Leaderboard{}
		if c.Get(ctx, client.ObjectKeyFromObject(lb), got) != nil {
			return false
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, hubv1alpha1.ConditionReady)
		return cond != nil && cond.Status == metav1.ConditionTrue && rankings.Board(got.UID) != nil
	})

	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				r := &hubv1alpha1.LeaderboardRow{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "row-" + strconv.Itoa(i)},
					Spec: hubv1alpha1.LeaderboardRowSpec{
						Leaderboard: "board",
						Metadata:    rawJSON(`{"agent":"agent-` + strconv.Itoa(i) + `"}`),
						Metrics:     rawJSON(fmt.Sprintf(`{"reward":%g,"cost":%d}`, float64(i%1000)/1000, i%37)),
					},
				}
				if err := c.Create(ctx, r); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	created := time.Since(start)
	select {
	case err := <-errs:
		t.Fatalf("creating rows: %v", err)
	default:
	}
	b := rankings.Board(lb.UID)
	// Ranked means: shown, and Valid for the row's generation; so a full index is
	// every row Valid and indexed.
	waitFor(t, 10*time.Minute, func() bool { return b.Len() == n })
	total := time.Since(start)
	fmt.Printf("rows-valid: %d rows created in %.1fs (%.0f rows/s); all Valid and in the rank index %.1fs after the first create (%.0f rows/s end to end)\n",
		n, created.Seconds(), float64(n)/created.Seconds(), total.Seconds(), float64(n)/total.Seconds())
	var counts []string
	requests.Range(func(k, v any) bool {
		if c := v.(*atomic.Int64).Load(); c >= 10 {
			counts = append(counts, fmt.Sprintf("%s %d", k, c))
		}
		return true
	})
	sort.Strings(counts)
	fmt.Printf("rows-valid: controller requests (10 or more of a kind): %s\n", strings.Join(counts, ", "))
}

type roundTripFunc func(*http.Request) (*http.Response, error)

// cancel ends ctx, the context of a benchmark's manager.
var cancel context.CancelFunc

// benchManager starts a control plane and the leaderboard controllers' manager, whose
// requests go through wrap, both stopped when t ends, and returns the writer's client:
// raised client-side limits, for 16 concurrent workers.
func benchManager(t *testing.T, wrap func(http.RoundTripper) http.RoundTripper) client.Client {
	t.Helper()
	logf.SetLogger(logr.Discard())
	ctx, cancel = context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env, restCfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	mcfg := rest.CopyConfig(restCfg)
	mcfg.WrapTransport = wrap
	mgr, err := newManager(mcfg, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error("the manager:", err)
		}
	})
	wcfg := *restCfg
	wcfg.QPS, wcfg.Burst = 2000, 4000
	c, err := client.New(&wcfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func rawJSON(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds; it fails the benchmark after limit.
func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
