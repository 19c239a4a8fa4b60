package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/httpapi"
	"podium.dev/podium/internal/ranking"
)

// serve runs h on addr until ctx ends.
func serve(ctx context.Context, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Println("serving on", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ceiling answers every request with the same bytes from memory, after reading the
// request's body, with the headers the operator's read sends (Content-Length, ETag,
// Cache-Control, CORS): the most a Go HTTP server can do on this machine for the same
// exchange. A ceiling without Content-Length answers chunked and is not the same work.
func ceiling(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("ceiling", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	bodyFile := fs.String("body", "", "file with the response body")
	_ = fs.Parse(args)
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		return err
	}
	length := []string{strconv.Itoa(len(body))}
	return serve(ctx, *addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = length
		h["Etag"] = []string{`"ceiling.0.1.1.50"`}
		h["Cache-Control"] = []string{"no-cache"}
		h["Access-Control-Allow-Origin"] = []string{"*"}
		h["Access-Control-Expose-Headers"] = []string{"ETag"}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}))
}

// naive serves the read the naive way: every request lists the board's rows from the
// apiserver, keeps the display and valid ones, sorts them and encodes the page.
func naive(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("naive", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	_ = fs.Parse(args)
	c, err := newClient(*kubeconfig)
	if err != nil {
		return err
	}
	return serve(ctx, *addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Page     int64  `json:"page"`
			PageSize int64  `json:"page_size"`
			Package  string `json:"package"`
			Name     string `json:"name"`
		}
		if err := apierr.DecodeJSON(r, &req); err != nil {
			apierr.Write(w, err)
			return
		}
		lb := &hubv1alpha1.Leaderboard{}
		if err := c.Get(r.Context(), client.ObjectKey{Namespace: benchNS, Name: benchBoard}, lb); err != nil {
			apierr.Write(w, err)
			return
		}
		var list hubv1alpha1.LeaderboardRowList
		if err := c.List(r.Context(), &list, client.InNamespace(benchNS), client.MatchingLabels{hubv1alpha1.LabelLeaderboard: lb.Name}); err != nil {
			apierr.Write(w, err)
			return
		}
		rows := make([]*hubv1alpha1.LeaderboardRow, 0, len(list.Items))
		for i := range list.Items {
			row := &list.Items[i]
			valid := meta.FindStatusCondition(row.Status.Conditions, hubv1alpha1.ConditionValid)
			if row.Spec.Visibility != hubv1alpha1.RowHide && valid != nil && valid.Status == metav1.ConditionTrue && valid.ObservedGeneration == row.Generation {
				rows = append(rows, row)
			}
		}
		body, err := httpapi.EncodeRead(lb, sortedBoard(ranking.Sort(lb.Spec.RankBy, rows)), req.Page, req.PageSize)
		if err != nil {
			apierr.Write(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
}

// sortedBoard is a ranked slice seen as the read's board index.
type sortedBoard []ranking.Entry

func (s sortedBoard) Len() int        { return len(s) }
func (s sortedBoard) Version() uint64 { return 0 }
func (s sortedBoard) Find(uid types.UID) (httpapi.RankedRow, bool) {
	for _, e := range s {
		if e.Row.UID == uid {
			return e, true
		}
	}
	return httpapi.RankedRow{}, false
}

func (s sortedBoard) Page(offset, limit int) []httpapi.RankedRow {
	if offset >= len(s) {
		return nil
	}
	end := min(offset+limit, len(s))
	out := make([]httpapi.RankedRow, 0, end-offset)
	for _, e := range s[offset:end] {
		out = append(out, httpapi.RankedRow{Rank: e.Rank, Row: e.Row})
	}
	return out
}
