package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/cli/hub"
	"podium.dev/podium/internal/wire/secretswire"
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

// apiGroup is a group of commands that talk to Podium's HTTP API: c with --endpoint
// and the verbs.
func (a *app) apiGroup(c *cobra.Command, verbs ...*cobra.Command) *cobra.Command {
	c.Args, c.RunE = noArgs, func(c *cobra.Command, _ []string) error { return c.Help() }
	a.addEndpointFlags(c)
	c.AddCommand(verbs...)
	return c
}

func (a *app) secretsCmd() *cobra.Command {
	return a.apiGroup(&cobra.Command{Use: "secrets", Aliases: []string{"secret"}, Short: "Store, list and revoke hosted secrets (through Podium's HTTP API)"},
		a.secretAddCmd(), a.secretListCmd(), a.secretDeleteCmd())
}

func (a *app) registryCmd() *cobra.Command {
	return a.apiGroup(&cobra.Command{Use: "registry-credentials", Aliases: []string{"registry-credential", "rc"}, Short: "Store, list and revoke container registry credentials (through Podium's HTTP API)"},
		a.registryAddCmd(), a.registryListCmd(), a.registryDeleteCmd())
}

// call sends one request to Podium's HTTP API and decodes its answer; req gives the
// query and the body, naming org (see orgField).
func call[T any](ctx context.Context, a *app, method, path string, req func(org *string) (url.Values, any)) (T, error) {
	var out T
	api, opts, err := a.api()
	if err != nil {
		return out, err
	}
	q, body := req(orgField(opts))
	return out, api.Do(ctx, method, path, q, body, &out)
}

// jobFlag is --job, with the rule that it excludes --org.
type jobFlag struct {
	id string
	// withOrg is whether --org was given too (Complete).
	withOrg bool
}

func (j *jobFlag) add(c *cobra.Command) {
	c.Flags().StringVar(&j.id, "job", "", "job UUID: a job-scope secret of that job (in the default org; excludes --org)")
}

func (j *jobFlag) complete(c *cobra.Command) {
	j.withOrg = c.Flags().Changed("job") && c.Flags().Changed("org")
}

func (j *jobFlag) validate() error {
	if j.withOrg {
		return usagef("--org and --job are mutually exclusive: a job's secrets live in the default org (auth login --org, or your ServiceAccount's namespace)")
	}
	if j.id != "" && !hubv1alpha1.IsUUID(j.id) {
		return usagef("--job must be a job UUID, not %q", j.id)
	}
	return nil
}

// jobArgs is the Complete and Validate of a verb of one argument and --job.
type jobArgs struct {
	oneArg
	job jobFlag
}

func (o *jobArgs) Complete(c *cobra.Command, args []string) error {
	o.job.complete(c)
	return o.oneArg.Complete(c, args)
}

func (o *jobArgs) Validate() error { return o.job.validate() }

// scope sets a request's scope and job id to the job's, when --job was given.
func (j *jobFlag) scope(scope, jobID **string) {
	if j.id != "" {
		*scope, *jobID = secretswire.Ptr(string(hubv1alpha1.ScopeJob)), &j.id
	}
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

// store POSTs to path the body that body makes (naming org, and the record to
// supersede); on 409 replacement_required it replaces the active record (its id from
// the error's existing) when --yes was given or a person on a terminal says so, and
// otherwise fails naming what is there. It returns the record stored and whether one
// was replaced.
func store[T any](ctx context.Context, a *app, r replaceFlags, path string, body func(org, supersede *string) any, describe func(existing map[string]any) string) (T, bool, error) {
	post := func(supersede *string) (T, error) {
		return call[T](ctx, a, http.MethodPost, path, func(org *string) (url.Values, any) { return nil, body(org, supersede) })
	}
	var first *string
	if r.supersede != "" {
		first = &r.supersede
	}
	rec, err := post(first)
	var ae *apierr.Error
	if err == nil || !errors.As(err, &ae) || ae.Code != apierr.CodeReplacementRequired {
		return rec, first != nil && err == nil, err
	}
	existing, _ := ae.Existing.(map[string]any)
	id, _ := existing["id"].(string)
	if !hubv1alpha1.IsUUID(id) {
		return rec, false, err
	}
	what := describe(existing)
	if !r.yes {
		if !isTerminal(a.stdin) || !isTerminal(a.stderr) {
			e := apierr.New(http.StatusConflict, apierr.CodeReplacementRequired,
				"replacing %s needs confirmation: pass --yes, or --supersede %s", what, id)
			e.Existing = ae.Existing
			return rec, false, e
		}
		if !a.confirm(fmt.Sprintf("Replace %s? [y/N] ", what)) {
			return rec, false, fmt.Errorf("not replaced: %s stays active", what)
		}
	}
	rec, err = post(&id)
	return rec, true, err
}

// confirm asks a person on the terminal, on stderr, and says whether they answered y
// or yes.
func (a *app) confirm(question string) bool {
	fmt.Fprint(a.stderr, question)
	answer, _ := bufio.NewReader(a.stdin).ReadString('\n')
	s := strings.ToLower(strings.TrimSpace(answer))
	return s == "y" || s == "yes"
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
