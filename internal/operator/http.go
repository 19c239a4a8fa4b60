package operator

import (
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"podium.dev/podium/internal/httpapi"
	"podium.dev/podium/internal/ranking"
)

// setupHTTP mounts the public read and every capability's routes on the HTTP server and
// adds it to the manager. It runs last: the other steps filled c.Routes.
func setupHTTP(mgr manager.Manager, o Options, c *components) error {
	if o.HTTPAddr == "" && o.HTTPListener == nil {
		return nil
	}
	log := mgr.GetLogger().WithName("http")
	if o.RequestLog != nil {
		log = o.RequestLog.WithName("http")
	}
	ready := append([]func() bool(nil), c.Ready...)
	var ranks httpapi.Ranks
	if c.Ranking != nil {
		ready = append(ready, c.Ranking.HasSynced)
		ranks = registryRanks{c.Ranking}
	}
	srv := httpapi.New(httpapi.Options{
		Addr:        o.HTTPAddr,
		Listener:    o.HTTPListener,
		Reviewer:    c.Reviewer,
		WaitForSync: mgr.GetCache().WaitForCacheSync,
		Ready:       ready,
		Log:         log,
	})
	if servesRead(o) {
		mountRead(srv, mgr, c, ranks, log)
	}
	for pattern, h := range c.Routes {
		srv.Handle(pattern, h)
	}
	return mgr.Add(srv)
}

// servesRead says whether the process serves the public read and the web pages: the read
// role always, the operator role when told to (Options.PublicRead).
func servesRead(o Options) bool { return o.Role == RoleRead || o.PublicRead }

// mountRead mounts the public read (POST and GET read, CSV, badge, row history, row read)
// and its CORS preflights; the /functions/v1/ aliases are the server's (httpapi).
func mountRead(srv *httpapi.Server, mgr manager.Manager, c *components, ranks httpapi.Ranks, log logr.Logger) {
	read := httpapi.NewRead(httpapi.ReadOptions{
		Cache:    mgr.GetCache(),
		API:      mgr.GetAPIReader(),
		Ranks:    ranks,
		Reviewer: c.Reviewer,
		Log:      log,
	})
	srv.Handle("POST "+httpapi.ReadPath, read)
	srv.Handle("GET "+httpapi.GetBySlugPath, http.HandlerFunc(read.ServeGET))
	srv.Handle("GET "+httpapi.GetByIDPath, http.HandlerFunc(read.ServeGET))
	srv.Handle("GET "+httpapi.CSVBySlugPath, http.HandlerFunc(read.ServeCSV))
	srv.Handle("GET "+httpapi.CSVByIDPath, http.HandlerFunc(read.ServeCSV))
	srv.Handle("GET "+httpapi.BadgeBySlugPath, http.HandlerFunc(read.ServeBadge))
	srv.Handle("GET "+httpapi.BadgeByIDPath, http.HandlerFunc(read.ServeBadge))
	srv.Handle("GET "+httpapi.HistoryBySlugPath, http.HandlerFunc(read.ServeHistory))
	srv.Handle("GET "+httpapi.HistoryByIDPath, http.HandlerFunc(read.ServeHistory))
	srv.Handle("POST "+httpapi.RowReadPath, http.HandlerFunc(read.ServeRowRead))
	for _, path := range []string{httpapi.ReadPath, httpapi.RowReadPath, httpapi.GetBySlugPath, httpapi.GetByIDPath, httpapi.CSVBySlugPath, httpapi.CSVByIDPath, httpapi.HistoryBySlugPath, httpapi.HistoryByIDPath} {
		srv.Handle("OPTIONS "+path, http.HandlerFunc(httpapi.Preflight))
	}
}

// registryRanks shows the ranking registry to the read handler.
type registryRanks struct{ r *ranking.Registry }

func (a registryRanks) Board(uid types.UID) httpapi.RankedBoard {
	b := a.r.Board(uid)
	if b == nil {
		return nil
	}
	return rankedBoard{b}
}

// rankedBoard is a board's index as the read sees it (httpapi.RankedRow is
// ranking.Entry).
type rankedBoard struct{ *ranking.Board }
