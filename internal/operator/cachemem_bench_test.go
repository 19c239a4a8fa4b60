package operator

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/scheme"
)

// cacheMemHeapProfile names a file for a heap profile taken while the benchmark's cache
// is full (go test's -memprofile is written after the benchmark dropped it).
var cacheMemHeapProfile = flag.String("cachemem.heapprofile", "", "write a heap profile of the full cache of BenchmarkCachedRowMemory100k here")

const cacheMemRows = 100_000

// The bench board: the read bench's (hack/bench/30-read.sh), ranked by score desc, time
// asc; the ranges board adds a standard error to its first rule.
var (
	memBoardRules = []hubv1alpha1.RankRule{
		{Accessor: "metrics.score", Direction: hubv1alpha1.Descending},
		{Accessor: "metrics.time", Direction: hubv1alpha1.Ascending},
	}
	memRangeRules = []hubv1alpha1.RankRule{
		{Accessor: "metrics.score", Direction: hubv1alpha1.Descending, Stderr: "metrics.se"},
		{Accessor: "metrics.time", Direction: hubv1alpha1.Ascending},
	}
)

// memRowShape is what a cached row holds beside its values.
type memRowShape struct {
	// changed rows were written by members (created-by and updated-by annotations) and
	// changed since (three history entries).
	changed bool
	// ranges rows carry a standard error, for a board with rank ranges.
	ranges bool
	// distinct rows (changed ones) each have their own author, so that no two rows'
	// annotations are alike: the bound of what sharing saves.
	distinct bool
}

// memRowJSON is row i of the bench board as the apiserver sends it to the operator's
// informer after the row controller's start-up pass: the read bench's row (as
// hack/loadgen seeds it), its status as the controller writes it (observed values
// included) and the controller's managed-fields entry.
func memRowJSON(lb *hubv1alpha1.Leaderboard, i int, shape memRowShape, rng *rand.Rand) []byte {
	md, _ := json.Marshal(map[string]any{"agent": fmt.Sprintf("agent-%d", i%97), "model": fmt.Sprintf("provider/model-%d", i%13)})
	metrics := map[string]any{"score": float64(rng.IntN(50000)) / 100, "time": i}
	if shape.ranges {
		metrics["se"] = float64(rng.IntN(500)) / 100
	}
	mt, _ := json.Marshal(metrics)
	uid := types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", rng.Uint32(), i))
	created := metav1.NewTime(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	validated := metav1.NewTime(created.Add(time.Duration(i) * time.Second)) // no two rows alike
	row := &hubv1alpha1.LeaderboardRow{
		TypeMeta: metav1.TypeMeta{APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "LeaderboardRow"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: lb.Namespace, Name: fmt.Sprintf("row-%06d", i), UID: uid,
			ResourceVersion: strconv.Itoa(1000 + i), Generation: 1, CreationTimestamp: created,
			Labels: map[string]string{hubv1alpha1.LabelLeaderboard: lb.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "Leaderboard", Name: lb.Name, UID: lb.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: "podium-operator", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: hubv1alpha1.GroupVersion.String(),
				Time: &created, FieldsType: "FieldsV1", Subresource: "status",
				FieldsV1: metav1.NewFieldsV1(`{"f:status":{".":{},"f:conditions":{".":{},"k:{\"type\":\"Valid\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:observedGeneration":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:id":{},"f:observedGeneration":{},"f:observedValues":{},"f:schemaGeneration":{},"f:updatedAt":{}}}`),
			}},
		},
		Spec: hubv1alpha1.LeaderboardRowSpec{
			Leaderboard: lb.Name, Visibility: hubv1alpha1.RowDisplay,
			Metadata: &apiextensionsv1.JSON{Raw: md}, Metrics: &apiextensionsv1.JSON{Raw: mt},
		},
		Status: hubv1alpha1.LeaderboardRowStatus{
			ID: string(uid), ObservedGeneration: 1, UpdatedAt: &created, SchemaGeneration: 1,
			// Valid, and Ready with the same reason and message (internal/health).
			Conditions: []metav1.Condition{{
				Type: hubv1alpha1.ConditionValid, Status: metav1.ConditionTrue, ObservedGeneration: 1,
				Reason: hubv1alpha1.ReasonValuesValid, Message: "metadata and metrics match the leaderboard's schemas",
				LastTransitionTime: validated,
			}, {
				Type: hubv1alpha1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: 1,
				Reason: hubv1alpha1.ReasonValuesValid, Message: "metadata and metrics match the leaderboard's schemas",
				LastTransitionTime: validated,
			}},
		},
	}
	if shape.changed {
		row.Generation = 4
		user := fmt.Sprintf("user-%d@example.com", i%211)
		if shape.distinct {
			user = fmt.Sprintf("user-%d@example.com", i)
		}
		row.Annotations = map[string]string{hubv1alpha1.AnnotationCreatedBy: user, hubv1alpha1.AnnotationUpdatedBy: user}
		row.Status.ObservedGeneration = 4
		for c := range row.Status.Conditions {
			row.Status.Conditions[c].ObservedGeneration = 4
		}
		for g := int64(2); g <= 4; g++ {
			old, cur := strconv.Itoa(int(g)), strconv.Itoa(int(g+1))
			row.Status.History = append(row.Status.History, hubv1alpha1.RowChange{
				At: metav1.NewTime(created.Add(time.Duration(g) * time.Hour)), By: row.Annotations[hubv1alpha1.AnnotationUpdatedBy],
				Generation: g, Fields: []hubv1alpha1.FieldChange{{Field: "metrics.time", Old: &old, New: &cur}},
			})
		}
	}
	row.Status.ObservedValues = rowhistory.Observe(&row.Spec)
	data, err := json.Marshal(row)
	if err != nil {
		panic(err)
	}
	return data
}

// memLister serves the informers of a cache built alone: the board from a list, and the
// rows as watch events, decoded from the JSON the apiserver sends, one object each, as
// the operator's informers receive them (client-go's watch-list, on by default since
// Kubernetes 1.35, sends the initial rows as watch events too).
type memLister struct {
	board *hubv1alpha1.Leaderboard
	rows  [][]byte
}

func (m *memLister) listerWatcher(obj kruntime.Object) toolscache.ListerWatcher {
	decoder := serializer.NewCodecFactory(scheme.Scheme).UniversalDeserializer()
	_, isRow := obj.(*hubv1alpha1.LeaderboardRow)
	_, isBoard := obj.(*hubv1alpha1.Leaderboard)
	watched := false
	return &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (kruntime.Object, error) {
			if isBoard {
				return &hubv1alpha1.LeaderboardList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []hubv1alpha1.Leaderboard{*m.board}}, nil
			}
			gvk, err := apiutil.GVKForObject(obj, scheme.Scheme)
			if err != nil {
				return nil, err
			}
			gvk.Kind += "List"
			list, err := scheme.Scheme.New(gvk)
			if err != nil {
				return nil, err
			}
			if err := meta.SetList(list, nil); err != nil {
				return nil, err
			}
			list.(metav1.ListInterface).SetResourceVersion("1")
			return list, nil
		},
		WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			w := watch.NewFakeWithChanSize(64, false)
			initial := opts.SendInitialEvents != nil && *opts.SendInitialEvents
			if !isRow || watched {
				if initial {
					go func() {
						if isBoard {
							w.Add(m.board.DeepCopy())
						}
						bookmark(w, obj)
					}()
				}
				return w, nil
			}
			watched = true
			go func() {
				for _, data := range m.rows {
					row, _, err := decoder.Decode(data, nil, nil)
					if err != nil {
						panic(err)
					}
					w.Add(row)
				}
				if initial {
					bookmark(w, obj)
				}
			}()
			return w, nil
		},
	}
}

// bookmark ends a watch-list's initial events.
func bookmark(w *watch.FakeWatcher, example kruntime.Object) {
	obj := example.DeepCopyObject()
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion("999999999")
	m.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	w.Action(watch.Bookmark, obj)
}

// fullCache fills a manager-style cache (the operator's transform and field indexes)
// and rank index with the rows and returns them once every row is ranked.
func fullCache(tb testing.TB, lb *hubv1alpha1.Leaderboard, rows [][]byte) (cache.Cache, *ranking.Registry, context.CancelFunc) {
	logf.SetLogger(logr.Discard())
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"Dataset", "HostedSecret", "Leaderboard", "LeaderboardRow"} {
		mapper.Add(hubv1alpha1.GroupVersion.WithKind(kind), meta.RESTScopeNamespace)
	}
	src := &memLister{board: lb, rows: rows}
	c, err := cache.New(&rest.Config{Host: "http://127.0.0.1:1"}, cache.Options{
		Scheme: scheme.Scheme, Mapper: mapper, DefaultTransform: CacheTransform(),
		NewInformer: func(_ toolscache.ListerWatcher, obj kruntime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
			return toolscache.NewSharedIndexInformer(src.listerWatcher(obj), obj, resync, idx)
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := index.RegisterOn(ctx, c, index.RecordFields()); err != nil {
		tb.Fatal(err)
	}
	reg := ranking.NewRegistry()
	if err := reg.Feed(ctx, c); err != nil {
		tb.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	deadline := time.Now().Add(5 * time.Minute)
	for reg.Board(lb.UID).Len() < len(rows) {
		if time.Now().After(deadline) {
			cancel()
			tb.Fatalf("%d of %d rows ranked after 5 minutes", reg.Board(lb.UID).Len(), len(rows))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return c, reg, cancel
}

// BenchmarkCachedRowMemory100k reports the operator's live heap per row for a board of
// 100,000 rows: the manager cache's rows (decoded as the informer receives them, through
// the operator's transform, with its field indexes) and the rank index, as
// hack/bench/30-read.sh measures the whole operator (docs/design/performance-log.md, "Where the
// memory goes"). seeded rows are that bench's; changed rows carry provenance
// annotations (one of 211 authors) and a history; ranges rows are on a board with rank
// ranges; changed-distinct rows have an author each.
func BenchmarkCachedRowMemory100k(b *testing.B) {
	if *cacheMemHeapProfile != "" {
		runtime.MemProfileRate = 4096 // finer than the default for per-row figures
	}
	for _, bc := range []struct {
		name  string
		shape memRowShape
	}{
		{"seeded", memRowShape{}},
		{"changed", memRowShape{changed: true}},
		{"ranges", memRowShape{ranges: true}},
		{"changed-ranges", memRowShape{changed: true, ranges: true}},
		{"changed-distinct", memRowShape{changed: true, distinct: true}},
		{"changed-distinct-ranges", memRowShape{changed: true, distinct: true, ranges: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lb := &hubv1alpha1.Leaderboard{
				TypeMeta:   metav1.TypeMeta{APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "Leaderboard"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "main", UID: "board-uid", ResourceVersion: "10", Generation: 1},
				Spec:       hubv1alpha1.LeaderboardSpec{Package: "bench/ds", Name: "main", RankBy: memBoardRules},
			}
			if bc.shape.ranges {
				lb.Spec.RankBy = memRangeRules
			}
			rng := rand.New(rand.NewPCG(1, 2))
			rows := make([][]byte, cacheMemRows)
			for i := range rows {
				rows[i] = memRowJSON(lb, i, bc.shape, rng)
			}
			var perRow float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				c, reg, cancel := fullCache(b, lb, rows)
				runtime.GC()
				runtime.GC()
				runtime.ReadMemStats(&after)
				perRow = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / cacheMemRows
				if *cacheMemHeapProfile != "" {
					f, err := os.Create(fmt.Sprintf("%s.%s", *cacheMemHeapProfile, bc.name))
					if err != nil {
						b.Fatal(err)
					}
					if err := pprof.WriteHeapProfile(f); err != nil {
						b.Fatal(err)
					}
					_ = f.Close()
				}
				cancel()
				runtime.KeepAlive(c)
				runtime.KeepAlive(reg)
			}
			runtime.KeepAlive(rows)
			b.ReportMetric(perRow, "B/row")
		})
	}
}
