package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/cli/hub"
)

// The hosted secret commands talk to Podium's HTTP API (docs/cli.md, "Hosted secrets"):
// the supersede decision, the org limit and the fingerprint live in the operator. The
// CLI only sends the API's typed request bodies (internal/wire/secretswire) and checks
// fields with the rules of the API types (api/v1alpha1); it links no server package.
// One file per verb (secrets_<verb>.go): Options with Complete, Validate and Run, and
// the printers in secrets_printer.go.

// api returns the client of Podium's HTTP API: --endpoint, else PODIUM_ENDPOINT, else
// the endpoint `auth login` recorded; signed in with an API key when one is given
// (apikey_client.go), else as the kubeconfig's user.
func (a *app) api() (*hub.API, hub.Options, error) {
	o, err := a.options()
	if err != nil {
		return nil, o, err
	}
	endpoint := a.endpoint
	if endpoint == "" {
		endpoint = os.Getenv("PODIUM_ENDPOINT")
	}
	if endpoint == "" {
		cfg, err := loadConfig()
		if err != nil {
			return nil, o, err
		}
		endpoint = cfg.Endpoint
	}
	api, err := a.connectAPI(o, endpoint)
	return api, o, err
}

func (a *app) secretsCmd() *cobra.Command {
	c := &cobra.Command{Use: "secrets", Aliases: []string{"secret"}, Short: "Store, list and revoke hosted secrets (through Podium's HTTP API)",
		Args: noArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	a.addEndpointFlags(c)
	c.AddCommand(a.secretAddCmd(), a.secretListCmd(), a.secretDeleteCmd())
	return c
}

func (a *app) registryCmd() *cobra.Command {
	c := &cobra.Command{Use: "registry-credentials", Aliases: []string{"registry-credential", "rc"}, Short: "Store, list and revoke container registry credentials (through Podium's HTTP API)",
		Args: noArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	a.addEndpointFlags(c)
	c.AddCommand(a.registryAddCmd(), a.registryListCmd(), a.registryDeleteCmd())
	return c
}

// jobFlag is --job, with the rule that it excludes --org.
type jobFlag struct{ id string }

func (j *jobFlag) add(c *cobra.Command) {
	c.Flags().StringVar(&j.id, "job", "", "job UUID: a job-scope secret of that job (in the default org; excludes --org)")
}

func (j *jobFlag) check(c *cobra.Command) error {
	if c.Flags().Changed("job") && c.Flags().Changed("org") {
		return usagef("--org and --job are mutually exclusive: a job's secrets live in the default org (auth login --org, or your ServiceAccount's namespace)")
	}
	if j.id != "" && !hubv1alpha1.IsUUID(j.id) {
		return usagef("--job must be a job UUID, not %q", j.id)
	}
	return nil
}

// orgField is the org name to send: --org when given, else the recorded one; nil lets
// the API use the caller's ServiceAccount namespace.
func orgField(o hub.Options) *string {
	if o.Org == "" {
		return nil
	}
	return &o.Org
}

// valueSource is where `add` reads the value: never from a flag (it would land in the
// shell's history and in the process list).
type valueSource struct {
	fromEnv string // the environment variable to read, "" for stdin or the prompt
}

// read returns the value: from the environment variable, from a hidden prompt when
// stdin is a terminal, else all of stdin (one trailing newline removed).
func (a *app) readValue(src valueSource, what string) ([]byte, error) {
	if src.fromEnv != "" {
		v, ok := os.LookupEnv(src.fromEnv)
		if !ok || v == "" {
			return nil, usagef("the environment variable %s is not set or empty", src.fromEnv)
		}
		return []byte(v), nil
	}
	if f, ok := a.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(a.stderr, "%s (input hidden): ", what)
		v, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(a.stderr)
		if err != nil {
			return nil, fmt.Errorf("reading the value from the terminal: %w", err)
		}
		if len(v) == 0 {
			return nil, usagef("no value entered")
		}
		return v, nil
	}
	v, err := io.ReadAll(io.LimitReader(a.stdin, hubv1alpha1.MaxValueBytes+3))
	if err != nil {
		return nil, fmt.Errorf("reading the value from stdin: %w", err)
	}
	v = trimNewline(v)
	if len(v) == 0 {
		return nil, usagef("no value on stdin: pipe it in, type it at the prompt on a terminal, or use --from-env")
	}
	return v, nil
}

// trimNewline removes one trailing "\n" or "\r\n" (what echo and a here-string add).
func trimNewline(v []byte) []byte {
	if n := len(v); n > 0 && v[n-1] == '\n' {
		v = v[:n-1]
		if n := len(v); n > 0 && v[n-1] == '\r' {
			v = v[:n-1]
		}
	}
	return v
}

// replaceFlags are --yes and --supersede of `add`.
type replaceFlags struct {
	yes       bool
	supersede string
}

func (r *replaceFlags) add(c *cobra.Command, what string) {
	c.Flags().BoolVarP(&r.yes, "yes", "y", false, "replace the active "+what+" without asking")
	c.Flags().StringVar(&r.supersede, "supersede", "", "replace the active "+what+" with this id (as listed); fails when it is no longer the active one")
}

func (r *replaceFlags) check() error {
	if r.yes && r.supersede != "" {
		return usagef("give --yes or --supersede, not both")
	}
	if r.supersede != "" && !hubv1alpha1.IsUUID(r.supersede) {
		return usagef("--supersede must be an id (a UUID), not %q", r.supersede)
	}
	return nil
}

// storeWithConfirm runs post (a POST of a typed body with supersede_credential_id set to
// its argument); on 409 replacement_required it replaces the active record (its id
// from the error's existing) when --yes was given or a person on a terminal says so,
// and otherwise fails naming what is there. It returns whether a record was replaced.
func (a *app) storeWithConfirm(r replaceFlags, post func(supersede *string) error, describe func(existing map[string]any) string) (bool, error) {
	var first *string
	if r.supersede != "" {
		first = &r.supersede
	}
	err := post(first)
	var ae *apierr.Error
	if err == nil || !errors.As(err, &ae) || ae.Code != apierr.CodeReplacementRequired {
		return first != nil && err == nil, err
	}
	existing, _ := ae.Existing.(map[string]any)
	id, _ := existing["id"].(string)
	if !hubv1alpha1.IsUUID(id) {
		return false, err
	}
	what := describe(existing)
	if !r.yes {
		if !isTerminal(a.stdin) || !isTerminal(a.stderr) {
			e := apierr.New(http.StatusConflict, apierr.CodeReplacementRequired,
				"replacing %s needs confirmation: pass --yes, or --supersede %s", what, id)
			e.Existing = ae.Existing
			return false, e
		}
		fmt.Fprintf(a.stderr, "Replace %s? [y/N] ", what)
		answer, _ := bufio.NewReader(a.stdin).ReadString('\n')
		if s := strings.ToLower(strings.TrimSpace(answer)); s != "y" && s != "yes" {
			return false, fmt.Errorf("not replaced: %s stays active", what)
		}
	}
	return true, post(&id)
}

// ending describes a value by its last four characters.
func ending(existing map[string]any) string {
	if l4, _ := existing["value_last4"].(string); l4 != "" {
		return "ending in ****" + l4
	}
	return "(too short to show its end)"
}

func masked(last4 string) string { return "****" + last4 }

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}
