//go:build bench

package controllers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/testenv"
)

// TestBenchRowHistory measures what the change history costs (docs/performance.md,
// "Row history"): PODIUM_BENCH_HISTORY_ROWS rows (default 500) of a typical shape are
// created, then changed 10 times each (one metric per change, 16 concurrent writers),
// waiting for the controller to observe every round. It prints the bytes a row takes
// as the apiserver stores it (its JSON, managedFields included) before and after the
// 10 changes, scaled to 100,000 rows against etcd's default 2 GiB quota, the size of
// the controller's status patches, and the changes observed per second.
// hack/bench/25-row-history.sh runs it.
func TestBenchRowHistory(t *testing.T) {
	n := 500
	if s := os.Getenv("PODIUM_BENCH_HISTORY_ROWS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("PODIUM_BENCH_HISTORY_ROWS=%q: want a positive number", s)
		}
	}
	// The controller's status writes (patches, or updates since rows are written at their
	// resourceVersion): how many, how many bytes.
	var patches, patchBytes atomic.Int64
	c := benchManager(t, func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if (req.Method == http.MethodPatch || req.Method == http.MethodPut) && strings.HasSuffix(req.URL.Path, "/status") && strings.Contains(req.URL.Path, "/leaderboardrows/") {
				patches.Add(1)
				patchBytes.Add(req.ContentLength)
			}
			return rt.RoundTrip(req)
		})
	})
	ns := testenv.Namespace("bench-history")
	must(t, c.Create(ctx, ns))
	must(t, c.Create(ctx, &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "ds"}}))
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "board"},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package: ns.Name + "/ds", Name: "board", Title: "Bench",
			RankBy: []hubv1alpha1.RankRule{{Accessor: "metrics.reward", Direction: hubv1alpha1.Descending}},
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

	name := func(i int) string { return "row-" + strconv.Itoa(i) }
	parallel(t, n, func(i int) error {
		return c.Create(ctx, &hubv1alpha1.LeaderboardRow{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name(i)},
			Spec: hubv1alpha1.LeaderboardRowSpec{
				Leaderboard: "board",
				Metadata:    rawJSON(fmt.Sprintf(`{"agent":"agent-%d","model":"provider/model-%d"}`, i, i%17)),
				Metrics:     rawJSON(fmt.Sprintf(`{"reward":%g,"cost":%d,"duration_s":%d}`, float64(i%1000)/1000, i%37, 600+i%300)),
			},
		})
	})
	b := rankings.Board(lb.UID)
	waitFor(t, 10*time.Minute, func() bool { return b.Len() == n })
	before := storedBytes(t, c, ns.Name)
	patches.Store(0)
	patchBytes.Store(0)

	start := time.Now()
	for round := 1; round <= rowhistory.MaxEntries; round++ {
		parallel(t, n, func(i int) error {
			r := &hubv1alpha1.LeaderboardRow{}
			for {
				if err := c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: name(i)}, r); err != nil {
					return err
				}
				r.Spec.Metrics = rawJSON(fmt.Sprintf(`{"reward":%g,"cost":%d,"duration_s":%d}`, float64((i+round)%1000)/1000, i%37, 600+i%300))
				err := c.Update(ctx, r)
				if err == nil || !isConflict(err) {
					return err
				}
			}
		})
		waitFor(t, 10*time.Minute, func() bool { return observedAll(c, ns.Name, n, round) })
	}
	elapsed := time.Since(start)
	after := storedBytes(t, c, ns.Name)

	perRowBefore, perRowAfter := float64(before)/float64(n), float64(after)/float64(n)
	const quota = 2 << 30
	fmt.Printf("row-history: %d rows, 10 changes each: %.0f bytes a row as stored before the changes, %.0f after (history %.0f bytes a row)\n",
		n, perRowBefore, perRowAfter, perRowAfter-perRowBefore)
	fmt.Printf("row-history: 100,000 such rows: %.0f MiB before, %.0f MiB with 10 changes each (%.1f%% of etcd's default 2 GiB quota)\n",
		perRowBefore*1e5/(1<<20), perRowAfter*1e5/(1<<20), 100*perRowAfter*1e5/quota)
	if p := patches.Load(); p > 0 {
		fmt.Printf("row-history: %d status patches for %d changes (%.2f a change), %.0f bytes each on average\n",
			p, 10*n, float64(p)/float64(10*n), float64(patchBytes.Load())/float64(p))
	}
	fmt.Printf("row-history: %d changes written and observed in %.1fs (%.0f changes/s end to end)\n",
		10*n, elapsed.Seconds(), float64(10*n)/elapsed.Seconds())
}

// parallel runs f for 0..n-1 on 16 workers and fails the test on the first error.
func parallel(t *testing.T, n int, f func(i int) error) {
	t.Helper()
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
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

func isConflict(err error) bool { return strings.Contains(err.Error(), "the object has been modified") }

// observedAll says whether every row of ns has its status for its generation and the
// given number of history entries.
func observedAll(c client.Client, ns string, n, entries int) bool {
	var rows hubv1alpha1.LeaderboardRowList
	if err := c.List(context.Background(), &rows, client.InNamespace(ns)); err != nil || len(rows.Items) != n {
		return false
	}
	for i := range rows.Items {
		r := &rows.Items[i]
		if r.Status.ObservedGeneration != r.Generation || len(r.Status.History) != entries {
			return false
		}
	}
	return true
}

// storedBytes sums the JSON of every row of ns as the apiserver stores it in etcd
// (custom resources are stored as JSON, managedFields included).
func storedBytes(t *testing.T, c client.Client, ns string) int {
	t.Helper()
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(hubv1alpha1.GroupVersion.WithKind("LeaderboardRowList"))
	must(t, c.List(context.Background(), &list, client.InNamespace(ns)))
	total := 0
	for i := range list.Items {
		b, err := json.Marshal(list.Items[i].Object)
		must(t, err)
		total += len(b)
	}
	return total
}
