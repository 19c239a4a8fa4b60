package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
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
	o := &registryDeleteOptions{app: a}
	c := a.verb(o, &cobra.Command{
		Use:   "delete ID | DISPLAY_NAME [--purge]",
		Short: "Revoke a registry credential by its id, or the active one of a display name (--purge: delete it for good)",
		Long: "Revokes the registry credential ID (as listed), or the active credential named DISPLAY_NAME.\n" +
			"With --purge the record is deleted instead: by ID that record only, by DISPLAY_NAME every record of\n" +
			"that name (active and revoked).",
		Args: exactArgs(1, "an id or a display name"),
	})
	c.Flags().BoolVar(&o.purge, "purge", false, "delete every record of the credential (active and revoked) instead of revoking it")
	return c
}

// Run revokes (or purges) the credential.
func (o *registryDeleteOptions) Run(ctx context.Context) error {
	what := fmt.Sprintf("registry credential %q", o.arg)
	out, err := call[secretswire.Affected](ctx, o.app, http.MethodDelete, "/v1/registry-credentials", func(org *string) (url.Values, any) {
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
