package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
)

// Names of the bench board: package bench/ds, name main, object bench/main.
const (
	benchNS    = "bench"
	benchBoard = "main"
)

func newClient(kubeconfig string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling: the apiserver is the limit
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}

// seed creates the bench board and rows rows, each written the way the operator's row
// controller would leave it (board label, id label, controller reference, Valid=True),
// so that the operator finds nothing to write when it starts.
func seed(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("seed", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	rows := fs.Int("rows", 100000, "rows to create")
	workers := fs.Int("c", 48, "concurrent writers")
	etcdURL := fs.String("etcd", "", "write the rows straight into this etcd (the apiserver's storage) instead of through the apiserver")
	_ = fs.Parse(args)
	c, err := newClient(*kubeconfig)
	if err != nil {
		return err
	}
	lb, err := ensureBoard(ctx, c)
	if err != nil {
		return err
	}
	if *rows == 0 {
		return nil
	}
	if *etcdURL != "" {
		return seedEtcd(ctx, *etcdURL, lb, *rows)
	}
	return seedThroughAPI(ctx, c, lb, *rows, *workers)
}

// ensureBoard creates the bench namespace and board, or reads the board already there.
func ensureBoard(ctx context.Context, c client.Client) (*hubv1alpha1.Leaderboard, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNS}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: benchBoard},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package: benchNS + "/ds", Name: benchBoard, Title: "Bench board", Visibility: hubv1alpha1.VisibilityPublic,
			MetadataSchema: &apiextensionsv1.JSON{Raw: []byte(`{"type":"object","properties":{"agent":{"type":"string"},"model":{"type":"string"}}}`)},
			MetricsSchema:  &apiextensionsv1.JSON{Raw: []byte(`{"type":"object","properties":{"score":{"type":"number"},"time":{"type":"number"}}}`)},
			Columns: []hubv1alpha1.Column{
				{ID: "agent", Header: "Agent", Accessor: "metadata.agent", Type: hubv1alpha1.ColumnText},
				{ID: "model", Header: "Model", Accessor: "metadata.model", Type: hubv1alpha1.ColumnText},
				{ID: "score", Header: "Score", Accessor: "metrics.score", Type: hubv1alpha1.ColumnNumber},
			},
			RankBy: []hubv1alpha1.RankRule{
				{Accessor: "metrics.score", Direction: hubv1alpha1.Descending},
				{Accessor: "metrics.time", Direction: hubv1alpha1.Ascending},
			},
		},
	}
	if err := c.Create(ctx, lb); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(lb), lb); err != nil {
			return nil, err
		}
	}
	return lb, nil
}

// seedThroughAPI creates rows rows of lb through the apiserver with workers writers.
func seedThroughAPI(ctx context.Context, c client.Client, lb *hubv1alpha1.Leaderboard, rows, workers int) error {
	start := time.Now()
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(rows) || ctx.Err() != nil {
					return
				}
				if err := seedRow(ctx, c, lb, i); err != nil {
					errc <- fmt.Errorf("row %d: %w", i, err)
					return
				}
				if n := done.Add(1); n%10000 == 0 {
					fmt.Printf("  seeded %d rows (%.0f rows/s)\n", n, float64(n)/time.Since(start).Seconds())
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Printf("seeded %d rows in %.1fs (%.0f rows/s, 3 writes each)\n", rows, el.Seconds(), float64(rows)/el.Seconds())
	return nil
}

// rowObject is row i of the bench board, as the operator's row controller leaves it.
func rowObject(lb *hubv1alpha1.Leaderboard, i int64) *hubv1alpha1.LeaderboardRow {
	md, _ := json.Marshal(map[string]any{"agent": fmt.Sprintf("agent-%d", i%97), "model": fmt.Sprintf("provider/model-%d", i%13)})
	mt, _ := json.Marshal(map[string]any{"score": float64(rand.IntN(50000)) / 100, "time": i})
	return &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: benchNS, Name: fmt.Sprintf("row-%06d", i),
			Labels: map[string]string{hubv1alpha1.LabelLeaderboard: lb.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "Leaderboard", Name: lb.Name, UID: lb.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: hubv1alpha1.LeaderboardRowSpec{
			Leaderboard: lb.Name,
			Metadata:    &apiextensionsv1.JSON{Raw: md},
			Metrics:     &apiextensionsv1.JSON{Raw: mt},
			Visibility:  hubv1alpha1.RowDisplay,
		},
	}
}

// validStatus is the status the row controller writes for a valid row: Valid and Ready
// (internal/health), so that the controller, finding it right, writes nothing.
func validStatus(row *hubv1alpha1.LeaderboardRow, lb *hubv1alpha1.Leaderboard) hubv1alpha1.LeaderboardRowStatus {
	now := metav1.Now()
	cond := func(typ string) metav1.Condition {
		return metav1.Condition{
			Type: typ, Status: metav1.ConditionTrue, ObservedGeneration: row.Generation,
			Reason: hubv1alpha1.ReasonValuesValid, Message: "metadata and metrics match the leaderboard's schemas",
			LastTransitionTime: now,
		}
	}
	return hubv1alpha1.LeaderboardRowStatus{
		ID:                 string(row.UID),
		ObservedGeneration: row.Generation,
		UpdatedAt:          ptrTime(row.CreationTimestamp),
		SchemaGeneration:   lb.Generation,
		Conditions:         []metav1.Condition{cond(hubv1alpha1.ConditionValid), cond(hubv1alpha1.ConditionReady)},
	}
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

func seedRow(ctx context.Context, c client.Client, lb *hubv1alpha1.Leaderboard, i int64) error {
	row := rowObject(lb, i)
	if err := c.Create(ctx, row); err != nil {
		return err
	}
	// status.id needs the UID the apiserver just assigned.
	row.Status = validStatus(row, lb)
	return c.Status().Update(ctx, row)
}
