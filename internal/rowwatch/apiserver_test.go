package rowwatch_test

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowwatch"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

// TestAgainstTheAPIServer runs rowwatch's watch against a real kube-apiserver: an
// informer built by Wrap holds what the apiserver holds through a row's create, status
// write and deletion; a watch from a resourceVersion the apiserver no longer has ends in
// the 410 the reflector relists on; a caller who may not watch rows gets the 403.
func TestAgainstTheAPIServer(t *testing.T) {
	env, cfg, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace("rowwatch")
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	lb := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "main"},
		Spec: hubv1alpha1.LeaderboardSpec{Package: ns.Name + "/bench", Name: "main", Title: "Bench"}}
	if err := c.Create(ctx, lb); err != nil {
		t.Fatal(err)
	}

	inf, watchRows := informer(t, cfg, c)
	go inf.Run(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}

	row := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, GenerateName: "main-"},
		Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "main", Metrics: &apiextensionsv1.JSON{Raw: []byte(`{"reward":9007199254740993}`)}}}
	if err := c.Create(ctx, row); err != nil {
		t.Fatal(err)
	}
	mirrors(t, inf, c, row)
	row.Status.ID = string(row.UID)
	row.Status.ObservedGeneration = row.Generation
	if err := c.Status().Update(ctx, row); err != nil {
		t.Fatal(err)
	}
	mirrors(t, inf, c, row)
	if err := c.Delete(ctx, row); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the row gone from the informer", func() bool {
		_, there, err := inf.GetStore().GetByKey(ns.Name + "/" + row.Name)
		return err == nil && !there
	})

	w, err := watchRows(ctx, metav1.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if e := apierrors.FromObject(ev.Object); ev.Type != watch.Error || !apierrors.IsResourceExpired(e) && !apierrors.IsGone(e) {
			t.Fatalf("a watch from resourceVersion 1: %s %v, want the 410 error event", ev.Type, e)
		}
	case <-time.After(time.Minute):
		t.Fatal("a watch from resourceVersion 1 sent nothing in a minute")
	}
	w.Stop()

	nobody := rest.CopyConfig(cfg)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
	_, watchAsNobody := informer(t, nobody, c)
	if _, err := watchAsNobody(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("a watch by a user who may not watch rows: %v, want 403", err)
	}
}

// informer builds the informer of rows Wrap makes for cfg, and returns the watch it was
// given.
func informer(t *testing.T, cfg *rest.Config, c client.Client) (toolscache.SharedIndexInformer, func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var lw *toolscache.ListWatch
	newInformer, err := rowwatch.Wrap(cfg, hc, func(given toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
		lw = given.(*toolscache.ListWatch)
		return toolscache.NewSharedIndexInformer(given, obj, resync, idx)
	})
	if err != nil {
		t.Fatal(err)
	}
	list := &toolscache.ListWatch{ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		rows := &hubv1alpha1.LeaderboardRowList{}
		return rows, c.List(ctx, rows, &client.ListOptions{Raw: &opts})
	}}
	inf := newInformer(list, &hubv1alpha1.LeaderboardRow{}, 0, toolscache.Indexers{})
	if lw.WatchFuncWithContext == nil {
		t.Fatal("Wrap did not give the informer of rows its watch")
	}
	return inf, lw.WatchFuncWithContext
}

// mirrors waits until the informer holds row as the apiserver has it now.
func mirrors(t *testing.T, inf toolscache.SharedIndexInformer, c client.Client, row *hubv1alpha1.LeaderboardRow) {
	t.Helper()
	live := &hubv1alpha1.LeaderboardRow{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(row), live); err != nil {
		t.Fatal(err)
	}
	live.SetGroupVersionKind(schema.GroupVersionKind{})
	eventually(t, "the informer at resourceVersion "+live.ResourceVersion, func() bool {
		o, there, err := inf.GetStore().GetByKey(row.Namespace + "/" + row.Name)
		return err == nil && there && equality.Semantic.DeepEqual(o, live)
	})
}

// eventually waits for cond, polling, at most a minute (a busy machine is slow, never
// wrong).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
