package cli

import (
	"context"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

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
		Use:   "delete DISPLAY_NAME [--purge]",
		Short: "Revoke the active registry credential of that name (--purge: delete every record of it)",
		Args:  exactArgs(1, "a display name"),
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
	body := secretswire.RevokeRegistry{DisplayName: &o.name, Purge: &o.purge, Org: orgField(opts)}
	var out secretswire.Affected
	if err := api.Do(ctx, http.MethodDelete, "/v1/registry-credentials", nil, body, &out); err != nil {
		return err
	}
	return o.a.secretPrinter().affected(out, fmt.Sprintf("registry credential %q", o.name), o.purge)
}
