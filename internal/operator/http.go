package operator

import (
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"podium.dev/podium/internal/httpapi"
)

func setupHTTP(mgr manager.Manager, o Options, c *components) error {
	if o.HTTPAddr == "" && o.HTTPListener == nil {
		return nil
	}
	srv := httpapi.New(httpapi.Options{
		Addr:        o.HTTPAddr,
		Listener:    o.HTTPListener,
		Reviewer:    c.Reviewer,
		WaitForSync: mgr.GetCache().WaitForCacheSync,
		Log:         mgr.GetLogger().WithName("http"),
	})
	for pattern, h := range c.Routes {
		srv.Handle(pattern, h)
	}
	return mgr.Add(srv)
}
