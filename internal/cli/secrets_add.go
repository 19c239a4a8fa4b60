package cli

import (
	"context"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/wire/secretswire"
)

// secretAddOptions are the inputs of `podium hub secrets add ENV_VAR`.
type secretAddOptions struct {
	*app
	jobArgs
	provider string
	fromEnv  bool
	rep      replaceFlags
}

func (a *app) secretAddCmd() *cobra.Command {
	return a.verb(&secretAddOptions{app: a}, "hub secrets add", exactArgs(1, "an environment variable name"))
}

// addFlags adds the verb's own flags to c.
func (o *secretAddOptions) addFlags(c *cobra.Command) {
	o.job.add(c)
	c.Flags().StringVar(&o.provider, "provider", "", "an optional provider label, e.g. anthropic")
	c.Flags().BoolVar(&o.fromEnv, "from-env", false, "read the value from the environment variable ENV_VAR")
	o.rep.add(c, "secret")
}

// Validate checks the argument and flags before anything is read or sent.
func (o *secretAddOptions) Validate() error {
	if err := o.jobArgs.Validate(); err != nil {
		return err
	}
	if err := o.rep.check(); err != nil {
		return err
	}
	if m := hubv1alpha1.CheckEnvVar(o.arg); m != "" {
		return usagef("ENV_VAR %s", m)
	}
	return nil
}

// Run reads the value and stores the secret, asking before it replaces an active one.
func (o *secretAddOptions) Run(ctx context.Context) error {
	src := valueSource{}
	if o.fromEnv {
		src.fromEnv = o.arg
	}
	value, err := o.readValue(src, "Value of "+o.arg)
	if err != nil {
		return err
	}
	body := secretswire.StoreSecret{EnvVar: &o.arg, Value: secretswire.Ptr(string(value))}
	o.job.scope(&body.Scope, &body.JobID)
	if o.provider != "" {
		body.Provider = &o.provider
	}
	rec, replaced, err := store[secretswire.Record](ctx, o.app, o.rep, secretkind.Env.Path, func(org, supersede *string) any {
		body.Org, body.SupersedeCredentialID = org, supersede
		return body
	}, func(e map[string]any) string { return "the active secret " + ending(e) })
	if err != nil {
		return err
	}
	return o.secretPrinter().stored(rec, replaced)
}
