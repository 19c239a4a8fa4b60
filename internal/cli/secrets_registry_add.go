package cli

import (
	"context"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/wire/secretswire"
)

// registryAddOptions are the inputs of `podium hub registry-credentials add`.
type registryAddOptions struct {
	a                             *app
	name                          string
	server, username, passwordEnv string
	rep                           replaceFlags
	// set by Complete
	body secretswire.StoreRegistry
}

func (a *app) registryAddCmd() *cobra.Command {
	o := &registryAddOptions{a: a}
	c := &cobra.Command{
		Use:   "add DISPLAY_NAME --server HOST[:PORT] --username U [--password-env VAR] [--yes | --supersede ID]",
		Short: "Store a container registry credential; the password comes from stdin, a hidden prompt or --password-env",
		Long: "Stores the credential DISPLAY_NAME of the organization. The password or token is read from the\n" +
			"environment variable named by --password-env, else from a hidden prompt when stdin is a terminal,\n" +
			"else from stdin (one trailing newline removed); never from a flag. When an active credential of that\n" +
			"name exists, a terminal asks whether to replace it; elsewhere --yes (or --supersede ID) is required.\n" +
			"An organization holds at most 20.",
		Args: exactArgs(1, "a display name"),
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
	c.Flags().StringVar(&o.server, "server", "", "the registry's host name with an optional port, e.g. ghcr.io")
	c.Flags().StringVar(&o.username, "username", "", "the account to sign in with")
	c.Flags().StringVar(&o.passwordEnv, "password-env", "", "read the password from this environment variable")
	o.rep.add(c, "credential")
	a.addJSON(c)
	return c
}

// Validate checks the arguments and flags with the API's own field rules.
func (o *registryAddOptions) Validate(c *cobra.Command, args []string) error {
	o.name = args[0]
	if err := requireFlags(c, "server", "username"); err != nil {
		return err
	}
	if err := o.rep.check(); err != nil {
		return err
	}
	for _, f := range []struct{ flag, msg string }{
		{"DISPLAY_NAME", hubv1alpha1.CheckDisplayName(o.name)}, {"--server", hubv1alpha1.CheckServer(o.server)}, {"--username", hubv1alpha1.CheckUsername(o.username)},
	} {
		if f.msg != "" {
			return usagef("%s %s", f.flag, f.msg)
		}
	}
	return nil
}

// Complete reads the password and builds the request body.
func (o *registryAddOptions) Complete() error {
	value, err := o.a.readValue(valueSource{fromEnv: o.passwordEnv}, "Password for "+o.username+"@"+o.server)
	if err != nil {
		return err
	}
	o.body = secretswire.StoreRegistry{DisplayName: &o.name, Server: &o.server, Username: &o.username, Password: secretswire.Ptr(string(value))}
	return nil
}

// Run stores the credential, asking before it replaces an active one.
func (o *registryAddOptions) Run(ctx context.Context) error {
	api, opts, err := o.a.api()
	if err != nil {
		return err
	}
	o.body.Org = orgField(opts)
	var rec secretswire.RegistryRecord
	replaced, err := o.a.storeWithConfirm(o.rep, func(supersede *string) error {
		o.body.SupersedeCredentialID = supersede
		return api.Do(ctx, http.MethodPost, "/v1/registry-credentials", nil, o.body, &rec)
	}, func(e map[string]any) string {
		fp, _ := e["fingerprint"].(string)
		return fmt.Sprintf("the active registry credential %q %s (fingerprint %s)", o.name, ending(e), fp)
	})
	if err != nil {
		return err
	}
	return o.a.secretPrinter().registryStored(rec, replaced)
}
