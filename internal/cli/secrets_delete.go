package cli

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/wire/secretswire"
)

// secretDeleteOptions are the inputs of `podium hub secrets delete`.
type secretDeleteOptions struct {
	a      *app
	envVar string
	job    jobFlag
	purge  bool
}

func (a *app) secretDeleteCmd() *cobra.Command {
	o := &secretDeleteOptions{a: a}
	c := &cobra.Command{
		Use:   "delete ENV_VAR [--job UUID] [--purge]",
		Short: "Revoke the active secret of ENV_VAR (--purge: delete every record of it)",
		Args:  exactArgs(1, "an environment variable name"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Validate(c, args); err != nil {
				return err
			}
			return o.Run(a.ctx(c))
		},
	}
	o.job.add(c)
	c.Flags().BoolVar(&o.purge, "purge", false, "delete every record of the secret (active and revoked) instead of revoking it")
	a.addJSON(c)
	return c
}

// Validate checks the argument and flags.
func (o *secretDeleteOptions) Validate(c *cobra.Command, args []string) error {
	o.envVar = args[0] // the API checks it and names the field
	return o.job.check(c)
}

// Run revokes (or purges) the secret.
func (o *secretDeleteOptions) Run(ctx context.Context) error {
	api, opts, err := o.a.api()
	if err != nil {
		return err
	}
	body := secretswire.RevokeSecret{EnvVar: &o.envVar, Purge: &o.purge, Org: orgField(opts)}
	if o.job.id != "" {
		body.Scope, body.JobID = secretswire.Ptr(string(hubv1alpha1.ScopeJob)), &o.job.id
	}
	var out secretswire.Affected
	if err := api.Do(ctx, http.MethodDelete, "/v1/secrets", nil, body, &out); err != nil {
		return err
	}
	return o.a.secretPrinter().affected(out, o.envVar, o.purge)
}
