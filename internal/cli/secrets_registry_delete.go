package cli

import (
	"context"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/wire/secretswire"
)

// registryDeleteOptions are the inputs of `podium hub registry-credentials delete`.
type registryDeleteOptions struct {
	a     *app
	name  string
	purge bool
}

func (a *app) registryDeleteCmd() *cobra.Command {
	o := &registryDeleteOptions{a: a}
	c := &cobra.Command{
		Use:   "delete ID | DISPLAY_NAME [--purge]",
		Short: "Revoke a registry credential by its id, or the active one of a display name (--purge: delete it for good)",
		Long: "Revokes the registry credential ID (as listed), or the active credential named DISPLAY_NAME.\n" +
			"With --purge the record is deleted instead: by ID that record only, by DISPLAY_NAME every record of\n" +
			"that name (active and revoked).",
		Args: exactArgs(1, "an id or a display name"),
		RunE: func(c *cobra.Command, args []string) error {
			o.name = args[0]
			return o.Run(a.ctx(c))
		},
	}
	c.Flags().BoolVar(&o.purge, "purge", false, "delete every record of the credential (active and revoked) instead of revoking it")
	a.addJSON(c)
	return c
}

// Run revokes (or purges) the credential.
func (o *registryDeleteOptions) Run(ctx context.Context) error {
	api, opts, err := o.a.api()
	if err != nil {
		return err
	}
	body := secretswire.RevokeRegistry{Purge: &o.purge, Org: orgField(opts)}
	what := fmt.Sprintf("registry credential %q", o.name)
	if hubv1alpha1.IsUUID(o.name) {
		body.CredentialID, what = &o.name, "registry credential "+o.name
	} else {
		body.DisplayName = &o.name
	}
	var out secretswire.Affected
	if err := api.Do(ctx, http.MethodDelete, "/v1/registry-credentials", nil, body, &out); err != nil {
		return err
	}
	return o.a.secretPrinter().affected(out, what, o.purge)
}
