package cli

import (
	"context"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/wire/secretswire"
)

// secretDeleteOptions are the inputs of `podium hub secrets delete ENV_VAR`.
type secretDeleteOptions struct {
	*app
	jobArgs // the API checks the name and names the field
	purge   bool
}

func (a *app) secretDeleteCmd() *cobra.Command {
	return a.verb(&secretDeleteOptions{app: a}, "hub secrets delete", exactArgs(1, "an environment variable name"))
}

// addFlags adds the verb's own flags to c.
func (o *secretDeleteOptions) addFlags(c *cobra.Command) {
	o.job.add(c)
	c.Flags().BoolVar(&o.purge, "purge", false, "delete every record of the secret (active and revoked) instead of revoking it")
}

// Run revokes (or purges) the secret.
func (o *secretDeleteOptions) Run(ctx context.Context) error {
	out, err := call[secretswire.Affected](ctx, o.app, http.MethodDelete, secretkind.Env.Path, func(org *string) (url.Values, any) {
		body := secretswire.RevokeSecret{EnvVar: &o.arg, Purge: &o.purge, Org: org}
		o.job.scope(&body.Scope, &body.JobID)
		return nil, body
	})
	if err != nil {
		return err
	}
	return o.secretPrinter().affected(out, o.arg, o.purge)
}
