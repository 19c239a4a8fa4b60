package cli

import (
	"context"
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/wire/secretswire"
)

// The API-key commands (docs/cli.md, "API keys") talk to Podium's HTTP API as the
// kubeconfig's user: a key acts as that user.

func (a *app) apiKeyCmd() *cobra.Command {
	c := &cobra.Command{Use: "api-key", Aliases: []string{"api-keys"}, Short: "Create, list and revoke your Podium API keys (for HTTP clients such as Harbor)",
		Args: noArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	a.addEndpointFlags(c)
	c.AddCommand(a.apiKeyCreateCmd(), a.apiKeyListCmd(), a.apiKeyRevokeCmd())
	return c
}

// apiKeyCreateOptions are the inputs of `podium auth api-key create`.
type apiKeyCreateOptions struct {
	a    *app
	name string
	days int
	body secretswire.CreateAPIKey
}

func (a *app) apiKeyCreateCmd() *cobra.Command {
	o := &apiKeyCreateOptions{a: a}
	c := &cobra.Command{
		Use:   "create [--name NAME] [--expires-in-days N]",
		Short: "Create an API key that acts as you; it is printed once and never shown again",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.Validate(c); err != nil {
				return err
			}
			return o.Run(a.ctx(c))
		},
	}
	c.Flags().StringVar(&o.name, "name", "", "a name to tell your keys apart")
	c.Flags().IntVar(&o.days, "expires-in-days", 0, "the key stops working after this many days (1-366; default: never)")
	a.addJSON(c)
	return c
}

// Validate checks the flags.
func (o *apiKeyCreateOptions) Validate(c *cobra.Command) error {
	if c.Flags().Changed("expires-in-days") {
		if o.days < 1 || o.days > 366 {
			return usagef("--expires-in-days must be 1 to 366")
		}
		o.body.ExpiresInDays = &o.days
	}
	if o.name != "" {
		o.body.Name = &o.name
	}
	return nil
}

// Run creates the key and prints it, once.
func (o *apiKeyCreateOptions) Run(ctx context.Context) error {
	api, _, err := o.a.api()
	if err != nil {
		return err
	}
	var out secretswire.APIKeyCreated
	if err := api.Do(ctx, http.MethodPost, "/v1/api-keys", nil, o.body, &out); err != nil {
		return err
	}
	if o.a.json {
		return o.a.printJSON(out)
	}
	fmt.Fprintln(o.a.stdout, out.Key)
	fmt.Fprintf(o.a.stderr, "Created API key %s for %s%s. It is shown only now: keep it secret (for Harbor: HARBOR_API_KEY).\n",
		out.ID, out.User, expiresNote(out.ExpiresAt))
	return nil
}

func expiresNote(exp *string) string {
	if exp == nil {
		return ", without expiry"
	}
	return ", expiring " + *exp
}

// apiKeyListOptions are the inputs of `podium auth api-key list`.
type apiKeyListOptions struct{ a *app }

func (a *app) apiKeyListCmd() *cobra.Command {
	o := &apiKeyListOptions{a: a}
	c := &cobra.Command{
		Use: "list", Aliases: []string{"ls"}, Short: "List your API keys (never the keys themselves)", Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return o.Run(a.ctx(c)) },
	}
	a.addListFlags(c, "ids")
	return c
}

// Run lists the caller's keys.
func (o *apiKeyListOptions) Run(ctx context.Context) error {
	api, _, err := o.a.api()
	if err != nil {
		return err
	}
	var out secretswire.APIKeyList
	if err := api.Do(ctx, http.MethodGet, "/v1/api-keys", nil, nil, &out); err != nil {
		return err
	}
	switch {
	case o.a.json:
		return o.a.printJSON(out)
	case o.a.quiet:
		for _, k := range out.APIKeys {
			fmt.Fprintln(o.a.stdout, k.ID)
		}
		return nil
	}
	t := o.a.newTable("ID", "NAME", "CREATED", "EXPIRES", "LAST USED")
	for _, k := range out.APIKeys {
		t.row(k.ID, orDash(&k.Name), k.CreatedAt, orDash(k.ExpiresAt), orDash(k.LastUsedAt))
	}
	return t.flush()
}

// apiKeyRevokeOptions are the inputs of `podium auth api-key revoke`.
type apiKeyRevokeOptions struct {
	a  *app
	id string
}

func (a *app) apiKeyRevokeCmd() *cobra.Command {
	o := &apiKeyRevokeOptions{a: a}
	c := &cobra.Command{
		Use: "revoke ID", Short: "Revoke one of your API keys: it stops working within seconds", Args: exactArgs(1, "an API key id"),
		RunE: func(c *cobra.Command, args []string) error {
			o.id = args[0]
			return o.Run(a.ctx(c))
		},
	}
	a.addJSON(c)
	return c
}

// Run revokes the key.
func (o *apiKeyRevokeOptions) Run(ctx context.Context) error {
	api, _, err := o.a.api()
	if err != nil {
		return err
	}
	var out secretswire.Affected
	if err := api.Do(ctx, http.MethodDelete, "/v1/api-keys", nil, secretswire.RevokeAPIKey{ID: &o.id}, &out); err != nil {
		return err
	}
	if o.a.json {
		return o.a.printJSON(out)
	}
	if out.Affected == 0 {
		fmt.Fprintf(o.a.stdout, "Nothing to revoke: you have no API key %s\n", o.id)
		return nil
	}
	fmt.Fprintf(o.a.stdout, "Revoked API key %s\n", o.id)
	return nil
}
