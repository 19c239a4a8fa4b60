package cli

import (
	"context"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/wire/secretswire"
)

// registryListOptions are the inputs of `podium hub registry-credentials list`.
type registryListOptions struct {
	*app
	listArgs
	status string
}

func (a *app) registryListCmd() *cobra.Command {
	return a.listVerb(&registryListOptions{app: a}, "ids", "hub registry-credentials list", noArgs)
}

// addFlags adds the verb's own flags to c.
func (o *registryListOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.status, "status", "active", "active, revoked or all")
}

// Run lists the organization's credentials and prints the page asked for.
func (o *registryListOptions) Run(ctx context.Context) error {
	out, err := call[secretswire.RegistryList](ctx, o.app, http.MethodGet, secretkind.Registry.Path, func(org *string) (url.Values, any) {
		return statusQuery(o.status, org), nil
	})
	if err != nil {
		return err
	}
	return o.secretPrinter().registry(o.paging, out.Credentials)
}
