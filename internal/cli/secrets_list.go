package cli

import (
	"context"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/wire/secretswire"
)

// secretListOptions are the inputs of `podium hub secrets list`.
type secretListOptions struct {
	a      *app
	job    jobFlag
	status string
	pg     paging
}

func (a *app) secretListCmd() *cobra.Command {
	o := &secretListOptions{a: a}
	c := &cobra.Command{
		Use:     "list [--job UUID] [--status active|revoked|all]",
		Aliases: []string{"ls"},
		Short:   "List hosted secrets (never their values: ****last4)",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(c); err != nil {
				return err
			}
			return o.Run(a.ctx(c))
		},
	}
	o.job.add(c)
	c.Flags().StringVar(&o.status, "status", "active", "active, revoked or all")
	o.pg.add(c)
	a.addListFlags(c, "ids")
	return c
}

// Validate checks the flags.
func (o *secretListOptions) Validate(c *cobra.Command) error {
	if err := o.job.check(c); err != nil {
		return err
	}
	return o.pg.check(c)
}

// query is the list's query string.
func (o *secretListOptions) query(org *string) url.Values {
	q := url.Values{"status": {o.status}}
	if o.job.id != "" {
		q.Set("scope", "job")
		q.Set("job_id", o.job.id)
	}
	if org != nil {
		q.Set("org", *org)
	}
	return q
}

// Run lists the secrets and prints the page asked for.
func (o *secretListOptions) Run(ctx context.Context) error {
	api, opts, err := o.a.api()
	if err != nil {
		return err
	}
	var out secretswire.SecretList
	if err := api.Do(ctx, http.MethodGet, "/v1/secrets", o.query(orgField(opts)), nil, &out); err != nil {
		return err
	}
	return o.a.secretPrinter().secrets(o.pg, out.Secrets)
}
