package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// list times a raw LIST of every LeaderboardRow with a plain Go client, received and
// decoded into typed objects and then dropped: the floor a read replica's start-up is
// compared with (hack/bench/39-scale-out.sh). With -limit, in pages of that many rows,
// as a paginated client (or an informer's pager) reads them from etcd; with -limit 0,
// one request at resourceVersion 0, which the apiserver answers from its watch cache.
// It prints {"rows": N, "seconds": S}.
func list(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("list", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	limit := fs.Int64("limit", 500, "rows per page; 0 lists in one request from the watch cache (resourceVersion 0)")
	_ = fs.Parse(args)
	c, err := newClient(*kubeconfig)
	if err != nil {
		return err
	}
	start := time.Now()
	rows := 0
	opts := []client.ListOption{client.Limit(*limit)}
	if *limit == 0 {
		opts = []client.ListOption{&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: "0"}}}
	}
	for {
		var page hubv1alpha1.LeaderboardRowList
		if err := c.List(ctx, &page, opts...); err != nil {
			return err
		}
		rows += len(page.Items)
		if page.Continue == "" {
			break
		}
		opts = []client.ListOption{client.Limit(*limit), client.Continue(page.Continue)}
	}
	out, _ := json.Marshal(map[string]any{"rows": rows, "seconds": time.Since(start).Seconds()})
	fmt.Println(string(out))
	return nil
}
