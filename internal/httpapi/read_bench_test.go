package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/httpapi"
)

// oneBoard is a cache reader holding a single board: the benchmark measures the
// handler, not the cache. Like the manager's cache it gives the board's informer, whose
// indexer holds the board under controller-runtime's field index keys.
type oneBoard struct {
	client.Reader
	lb      *hubv1alpha1.Leaderboard
	indexer toolscache.Indexer
}

func newOneBoard(lb *hubv1alpha1.Leaderboard) oneBoard {
	idx := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{
		"field:metadata.uid": func(o any) ([]string, error) {
			return []string{"__all_namespaces/" + string(o.(*hubv1alpha1.Leaderboard).UID)}, nil
		},
		"field:spec.slug": func(o any) ([]string, error) {
			b := o.(*hubv1alpha1.Leaderboard)
			return []string{b.Namespace + "/" + b.Spec.Package + "/" + b.Spec.Name}, nil
		},
	})
	if err := idx.Add(lb); err != nil {
		panic(err)
	}
	return oneBoard{lb: lb, indexer: idx}
}

func (o oneBoard) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	list.(*hubv1alpha1.LeaderboardList).Items = []hubv1alpha1.Leaderboard{*o.lb}
	return nil
}

func (o oneBoard) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return fmt.Errorf("unused")
}

func (o oneBoard) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return syncedInformer{indexer: o.indexer}, nil
}

type syncedInformer struct {
	cache.Informer
	indexer toolscache.Indexer
}

func (syncedInformer) HasSynced() bool                  { return true }
func (i syncedInformer) GetIndexer() toolscache.Indexer { return i.indexer }

// discardWriter is a ResponseWriter that keeps nothing but the status, with a fresh
// header map per request as net/http's own.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

var _ runtime.Object = &hubv1alpha1.LeaderboardList{}

type sliceRanks struct{ b *sliceBoard }

func (s sliceRanks) Board(types.UID) httpapi.RankedBoard { return s.b }

type sliceBoard struct{ rows []httpapi.RankedRow }

func (s *sliceBoard) Len() int        { return len(s.rows) }
func (s *sliceBoard) Version() uint64 { return 1 }
func (s *sliceBoard) Find(uid types.UID) (httpapi.RankedRow, bool) {
	for _, r := range s.rows {
		if r.Row.UID == uid {
			return r, true
		}
	}
	return httpapi.RankedRow{}, false
}
func (s *sliceBoard) Page(offset, limit int) []httpapi.RankedRow {
	return s.rows[offset:min(offset+limit, len(s.rows))]
}

// BenchmarkRead serves page 1 and page 2,000 of a 100,000-row board through the whole
// server stack (authentication, metrics, log line, read); the page is encoded once and
// then served from the page cache, as it is while a board does not change. The request
// is built by httptest (a few allocations of its own) and the answer discarded.
func BenchmarkRead(b *testing.B) {
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "main", UID: "a71d39e6-6973-4ed1-bd7c-038473968c00", ResourceVersion: "7"},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package: "bench/ds", Name: "main", Title: "Bench", Visibility: hubv1alpha1.VisibilityPublic,
			RankBy: []hubv1alpha1.RankRule{{Accessor: "metrics.score", Direction: hubv1alpha1.Descending}},
		},
	}
	board := &sliceBoard{}
	for i := range 100000 {
		board.rows = append(board.rows, httpapi.RankedRow{Rank: i + 1, Row: &hubv1alpha1.LeaderboardRow{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("row-%d", i), UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))},
			Spec: hubv1alpha1.LeaderboardRowSpec{
				Leaderboard: "main",
				Metadata:    &apiextensionsv1.JSON{Raw: []byte(`{"agent":"agent-1","model":"provider/model-1"}`)},
				Metrics:     &apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf(`{"score":%d,"time":%d}`, 100000-i, i))},
			},
		}})
	}
	// The operator's logger (cmd/operator: controller-runtime's zap, production
	// defaults) writing nowhere, so that the log line costs what it costs there.
	srv := httpapi.New(httpapi.Options{Log: zap.New(zap.WriteTo(io.Discard))})
	srv.Handle("POST "+httpapi.ReadPath, httpapi.NewRead(httpapi.ReadOptions{
		Cache: newOneBoard(lb), Ranks: sliceRanks{board}, Log: logr.Discard(),
	}))
	h := srv.Handler()
	for _, page := range []int{1, 2000} {
		body := fmt.Sprintf(`{"package":"bench/ds","name":"main","page":%d,"page_size":50}`, page)
		b.Run(fmt.Sprintf("page=%d", page), func(b *testing.B) {
			b.ReportAllocs()
			rd := strings.NewReader(body)
			for b.Loop() {
				rd.Reset(body)
				req := httptest.NewRequest(http.MethodPost, httpapi.ReadPath, rd)
				w := &discardWriter{h: http.Header{}}
				h.ServeHTTP(w, req)
				if w.code != http.StatusOK {
					b.Fatalf("status %d", w.code)
				}
			}
		})
	}
}
