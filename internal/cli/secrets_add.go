package cli

import (
	"context"
	"net/http"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/wire/secretswire"
)

// secretAddOptions are the inputs of `podium hub secrets add`.
type secretAddOptions struct {
	a        *app
	envVar   string
	job      jobFlag
	provider string
	fromEnv  bool
	rep      replaceFlags
	// set by Complete
	body secretswire.StoreSecret
}

func (a *app) secretAddCmd() *cobra.Command {
	o := &secretAddOptions{a: a}
	c := &cobra.Command{
		Use:   "add ENV_VAR [--job UUID] [--provider P] [--from-env] [--yes | --supersede ID]",
		Short: "Store a hosted secret; the value comes from stdin, a hidden prompt or --from-env",
		Long: "Stores a hosted secret exported as ENV_VAR. The value is read from the environment variable of the\n" +
			"same name with --from-env, else from a hidden prompt when stdin is a terminal, else from stdin (one\n" +
			"trailing newline removed). It is never taken from a flag: a flag lands in the shell's history.\n" +
			"When an active secret exists for ENV_VAR, a terminal asks whether to replace it; elsewhere --yes\n" +
			"(or --supersede ID) is required. Replacing needs organization owner rights.",
		Args: exactArgs(1, "an environment variable name"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Validate(c, args); err != nil {
				return err
			}
			if err := o.Complete(); err != nil {
				return err
			}
			return o.Run(a.ctx(c))
		},
	}
	o.job.add(c)
	c.Flags().StringVar(&o.provider, "provider", "", "an optional provider label, e.g. anthropic")
	c.Flags().BoolVar(&o.fromEnv, "from-env", false, "read the value from the environment variable ENV_VAR")
	o.rep.add(c, "secret")
	a.addJSON(c)
	return c
}

// Validate checks the arguments and flags before anything is read or sent.
func (o *secretAddOptions) Validate(c *cobra.Command, args []string) error {
	o.envVar = args[0]
	if err := o.job.check(c); err != nil {
		return err
	}
	if err := o.rep.check(); err != nil {
		return err
	}
	if m := hubv1alpha1.CheckEnvVar(o.envVar); m != "" {
		return usagef("ENV_VAR %s", m)
	}
	return nil
}

// Complete reads the value and builds the request body.
func (o *secretAddOptions) Complete() error {
	src := valueSource{}
	if o.fromEnv {
		src.fromEnv = o.envVar
	}
	value, err := o.a.readValue(src, "Value of "+o.envVar)
	if err != nil {
		return err
	}
	o.body = secretswire.StoreSecret{EnvVar: &o.envVar, Value: secretswire.Ptr(string(value))}
	if o.job.id != "" {
		o.body.Scope, o.body.JobID = secretswire.Ptr(string(hubv1alpha1.ScopeJob)), &o.job.id
	}
	if o.provider != "" {
		o.body.Provider = &o.provider
	}
	return nil
}

// Run stores the secret, asking before it replaces an active one.
func (o *secretAddOptions) Run(ctx context.Context) error {
	api, opts, err := o.a.api()
	if err != nil {
		return err
	}
	o.body.Org = orgField(opts)
	var rec secretswire.Record
	replaced, err := o.a.storeWithConfirm(o.rep, func(supersede *string) error {
		o.body.SupersedeCredentialID = supersede
		return api.Do(ctx, http.MethodPost, "/v1/secrets", nil, o.body, &rec)
	}, func(e map[string]any) string { return "the active secret " + ending(e) })
	if err != nil {
		return err
	}
	return o.a.secretPrinter().stored(rec, replaced)
}
