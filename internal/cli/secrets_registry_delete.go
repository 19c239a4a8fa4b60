package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/wire/secretswire"
)

// registryDeleteOptions are the inputs of `podium hub registry-credentials delete
// ID | DISPLAY_NAME`.
type registryDeleteOptions struct {
	*app
	oneArg
	purge bool
}

func (a *app) registryDeleteCmd() *cobra.Command {
	return a.verb(&registryDeleteOptions{app: a}, "hub registry-credentials delete", exactArgs(1, "an id or a display name"))
}

// addFlags adds the verb's own flags to c.
func (o *registryDeleteOptions) addFlags(c *cobra.Command) {
	c.Flags().BoolVar(&o.purge, "purge", false, "delete every record of the credential (active and revoked) instead of revoking it")
}

// Run revokes (or purges) the credential.
func (o *registryDeleteOptions) Run(ctx context.Context) error {
	what := fmt.Sprintf("registry credential %q", o.arg)
	out, err := call[secretswire.Affected](ctx, o.app, http.MethodDelete, secretkind.Registry.Path, func(org *string) (url.Values, any) {
		body := secretswire.RevokeRegistry{Purge: &o.purge, Org: org}
		if hubv1alpha1.IsUUID(o.arg) {
			body.CredentialID, what = &o.arg, "registry credential "+o.arg
		} else {
			body.DisplayName = &o.arg
		}
		return nil, body
	})
	if err != nil {
		return err
	}
	return o.secretPrinter().affected(out, what, o.purge)
}
