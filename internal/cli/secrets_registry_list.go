package cli

import (
	"context"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/wire/secretswire"
)

// registryListOptions are the inputs of `podium hub registry-credentials list`.
type registryListOptions struct {
	a      *app
	status string
	pg     paging
}

func (a *app) registryListCmd() *cobra.Command {
	o := &registryListOptions{a: a}
	c := &cobra.Command{
		Use:     "list [--status active|revoked|all]",
		Aliases: []string{"ls"},
		Short:   "List registry credentials (never their keys or passwords: a fingerprint)",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.pg.check(c); err != nil {
				return err
			}
			return o.Run(a.ctx(c))
		},
	}
	c.Flags().StringVar(&o.status, "status", "active", "active, revoked or all")
	o.pg.add(c)
	a.addListFlags(c, "ids")
	return c
}

// Run lists the organization's credentials and prints the page asked for.
func (o *registryListOptions) Run(ctx context.Context) error {
	api, opts, err := o.a.api()
	if err != nil {
		return err
	}
	q := url.Values{"status": {o.status}}
	if org := orgField(opts); org != nil {
		q.Set("org", *org)
	}
	var out secretswire.RegistryList
	if err := api.Do(ctx, http.MethodGet, "/v1/registry-credentials", q, nil, &out); err != nil {
		return err
	}
	return o.a.secretPrinter().registry(o.pg, out.Credentials)
}
