package cli

import (
	"context"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/wire/secretswire"
)

// secretListOptions are the inputs of `podium hub secrets list`.
type secretListOptions struct {
	*app
	listArgs
	job    jobFlag
	status string
}

func (a *app) secretListCmd() *cobra.Command {
	return a.listVerb(&secretListOptions{app: a}, "ids", "hub secrets list", noArgs)
}

// addFlags adds the verb's own flags to c.
func (o *secretListOptions) addFlags(c *cobra.Command) {
	o.job.add(c)
	c.Flags().StringVar(&o.status, "status", "active", "active, revoked or all")
}

func (o *secretListOptions) Complete(c *cobra.Command, args []string) error {
	o.job.complete(c)
	return o.listArgs.Complete(c, args)
}

func (o *secretListOptions) Validate() error {
	if err := o.job.validate(); err != nil {
		return err
	}
	return o.listArgs.Validate()
}

// Run lists the secrets and prints the page asked for.
func (o *secretListOptions) Run(ctx context.Context) error {
	out, err := call[secretswire.SecretList](ctx, o.app, http.MethodGet, secretkind.Env.Path, func(org *string) (url.Values, any) {
		q := statusQuery(o.status, org)
		if o.job.id != "" {
			q.Set("scope", "job")
			q.Set("job_id", o.job.id)
		}
		return q, nil
	})
	if err != nil {
		return err
	}
	return o.secretPrinter().secrets(o.paging, out.Secrets)
}

// statusQuery is the query of a list of records of a status (active, revoked or all)
// in org.
func statusQuery(status string, org *string) url.Values {
	q := url.Values{"status": {status}}
	if org != nil {
		q.Set("org", *org)
	}
	return q
}
