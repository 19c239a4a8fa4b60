package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/wire/secretswire"
)

// The API-key commands (docs/cli.md, "API keys") talk to Podium's HTTP API as the
// kubeconfig's user: a key acts as that user.

func (a *app) apiKeyCmd() *cobra.Command {
	return a.apiGroup(&cobra.Command{Use: "api-key", Aliases: []string{"api-keys"}, Short: "Create, list and revoke your Podium API keys (for HTTP clients such as Harbor)"},
		a.apiKeyCreateCmd(), a.apiKeyListCmd(), a.apiKeyRevokeCmd())
}

// apiKeyCreateOptions are the inputs of `podium auth api-key create`.
type apiKeyCreateOptions struct {
	*app
	name string
	days int
	// daysGiven is whether --expires-in-days was given (Complete).
	daysGiven bool
}

func (a *app) apiKeyCreateCmd() *cobra.Command {
	return a.verb(&apiKeyCreateOptions{app: a}, "auth api-key create", noArgs)
}

// addFlags adds the verb's own flags to c.
func (o *apiKeyCreateOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.name, "name", "", "a name to tell your keys apart")
	c.Flags().IntVar(&o.days, "expires-in-days", 0, "the key stops working after this many days (1-366; default: never)")
}

func (o *apiKeyCreateOptions) Complete(c *cobra.Command, _ []string) error {
	o.daysGiven = c.Flags().Changed("expires-in-days")
	return nil
}

// Validate checks the flags.
func (o *apiKeyCreateOptions) Validate() error {
	if o.daysGiven && (o.days < 1 || o.days > 366) {
		return usagef("--expires-in-days must be 1 to 366")
	}
	return nil
}

// Run creates the key and prints it, once.
func (o *apiKeyCreateOptions) Run(ctx context.Context) error {
	var body secretswire.CreateAPIKey
	if o.daysGiven {
		body.ExpiresInDays = &o.days
	}
	if o.name != "" {
		body.Name = &o.name
	}
	out, err := call[secretswire.APIKeyCreated](ctx, o.app, http.MethodPost, "/v1/api-keys", func(*string) (url.Values, any) { return nil, body })
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(out)
	}
	fmt.Fprintln(o.stdout, out.Key)
	fmt.Fprintf(o.stderr, "Created API key %s for %s%s. It is shown only now: keep it secret (for Harbor: HARBOR_API_KEY).\n",
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
type apiKeyListOptions struct {
	*app
	noInput
}

func (a *app) apiKeyListCmd() *cobra.Command {
	return a.listVerb(&apiKeyListOptions{app: a}, "ids", "auth api-key list", noArgs)
}

// Run lists the caller's keys.
func (o *apiKeyListOptions) Run(ctx context.Context) error {
	out, err := call[secretswire.APIKeyList](ctx, o.app, http.MethodGet, "/v1/api-keys", func(*string) (url.Values, any) { return nil, nil })
	switch {
	case err != nil:
		return err
	case o.json:
		return o.printJSON(out)
	case o.quiet:
		for _, k := range out.APIKeys {
			fmt.Fprintln(o.stdout, k.ID)
		}
		return nil
	}
	return printTable(o.app, apiKeyColumns, out.APIKeys)
}

var apiKeyColumns = []column[secretswire.APIKey]{
	{"ID", func(k secretswire.APIKey) string { return k.ID }},
	{"NAME", func(k secretswire.APIKey) string { return orDash(&k.Name) }},
	{"CREATED", func(k secretswire.APIKey) string { return k.CreatedAt }},
	{"EXPIRES", func(k secretswire.APIKey) string { return orDash(k.ExpiresAt) }},
	{"LAST USED", func(k secretswire.APIKey) string { return orDash(k.LastUsedAt) }},
}

// apiKeyRevokeOptions are the inputs of `podium auth api-key revoke ID`.
type apiKeyRevokeOptions struct {
	*app
	oneArg
}

func (a *app) apiKeyRevokeCmd() *cobra.Command {
	return a.verb(&apiKeyRevokeOptions{app: a}, "auth api-key revoke", exactArgs(1, "an API key id"))
}

// Run revokes the key.
func (o *apiKeyRevokeOptions) Run(ctx context.Context) error {
	out, err := call[secretswire.Affected](ctx, o.app, http.MethodDelete, "/v1/api-keys", func(*string) (url.Values, any) {
		return nil, secretswire.RevokeAPIKey{ID: &o.arg}
	})
	switch {
	case err != nil:
		return err
	case o.json:
		return o.printJSON(out)
	case out.Affected == 0:
		fmt.Fprintf(o.stdout, "Nothing to revoke: you have no API key %s\n", o.arg)
		return nil
	}
	fmt.Fprintf(o.stdout, "Revoked API key %s\n", o.arg)
	return nil
}
