package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// seedEtcd writes rows straight into the apiserver's storage, in batched etcd
// transactions: on a shared 2-core machine the apiserver creates some hundred rows a
// second (three writes each), far too slow for a 100,000-row bench. Everything
// downstream is real: the apiserver's watch cache serves them, the operator lists and
// watches them through its informers, and the naive read lists them from the apiserver.
// The objects are what the apiserver and the row controller would have stored (uid,
// creationTimestamp, generation, labels, controller reference, Valid=True).
//
// Each row is its own put, at its own etcd revision, as the apiserver writes them.
// Several rows in one transaction share a revision, which the apiserver never makes:
// an informer that lists while the watch cache is halfway through such a transaction
// gets part of it and then watches from after that revision, so it never sees the
// rest. Early runs of this bench lost 50 to 99 rows that way.
func seedEtcd(ctx context.Context, url string, lb *hubv1alpha1.Leaderboard, rows int) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	const batch, workers = 100, 32
	start := time.Now()
	created := metav1.NewTime(time.Now().Truncate(time.Second))
	jobs := make(chan int64)
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := range jobs {
				for i := first; i < min(first+batch, int64(rows)); i++ {
					row := rowObject(lb, i)
					row.APIVersion, row.Kind = hubv1alpha1.GroupVersion.String(), "LeaderboardRow"
					row.UID = types.UID(uuid.NewString())
					row.Generation = 1
					row.CreationTimestamp = created
					row.Status = validStatus(row, lb)
					data, err := json.Marshal(row)
					if err != nil {
						errc <- err
						cancel()
						return
					}
					key := fmt.Sprintf("/registry/%s/leaderboardrows/%s/%s", hubv1alpha1.GroupVersion.Group, row.Namespace, row.Name)
					if _, err := cli.Put(ctx, key, string(data)); err != nil {
						errc <- err
						cancel()
						return
					}
				}
			}
		}()
	}
send:
	for first := int64(0); first < int64(rows); first += batch {
		select {
		case jobs <- first:
		case <-ctx.Done():
			break send
		}
	}
	close(jobs)
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Printf("seeded %d rows into etcd in %.1fs (%.0f rows/s)\n", rows, el.Seconds(), float64(rows)/el.Seconds())
	return nil
}
