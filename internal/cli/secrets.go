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
	"podium.dev/podium/internal/secrets"
)

// The hosted secret commands talk to Podium's HTTP API (docs/cli.md, "Hosted secrets"):
// the supersede decision, the org limit and the fingerprint live in the operator.

// secretRecord and registryRecord are what GET /v1/secrets and GET
// /v1/registry-credentials show: the API's own wire types.
type (
	secretRecord   = secrets.Record
	registryRecord = secrets.RegistryRecord
)

// api returns the client of Podium's HTTP API: --endpoint, else PODIUM_ENDPOINT, else
// the endpoint `auth login` recorded.
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
	api, err := hub.NewAPI(o, endpoint)
	return api, o, err
}

func (a *app) secretsCmd() *cobra.Command {
	c := &cobra.Command{Use: "secrets", Aliases: []string{"secret"}, Short: "Store, list and revoke hosted secrets (through Podium's HTTP API)",
		Args: noArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	c.PersistentFlags().StringVar(&a.endpoint, "endpoint", "", "Podium's HTTP endpoint (default: PODIUM_ENDPOINT, else the one recorded by auth login)")
	c.AddCommand(a.secretAddCmd(), a.secretListCmd(), a.secretDeleteCmd())
	return c
}

func (a *app) registryCmd() *cobra.Command {
	c := &cobra.Command{Use: "registry-credentials", Aliases: []string{"registry-credential", "rc"}, Short: "Store, list and revoke container registry credentials (through Podium's HTTP API)",
		Args: noArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	c.PersistentFlags().StringVar(&a.endpoint, "endpoint", "", "Podium's HTTP endpoint (default: PODIUM_ENDPOINT, else the one recorded by auth login)")
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

// org returns the org name to send: --org when given, else the recorded one; "" lets
// the API use the caller's ServiceAccount namespace.
func orgField(o hub.Options, body map[string]any) {
	if o.Org != "" {
		body["org"] = o.Org
	}
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
	v, err := io.ReadAll(io.LimitReader(a.stdin, secrets.MaxValueBytes+3))
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

// storeWithConfirm POSTs body; on 409 replacement_required it replaces the active
// record (its id from the error's existing) when --yes was given or a person on a
// terminal says so, and otherwise fails naming what is there. It returns whether a
// record was replaced.
func (a *app) storeWithConfirm(ctx context.Context, api *hub.API, path string, body map[string]any, r replaceFlags, describe func(existing map[string]any) string, out any) (bool, error) {
	if r.supersede != "" {
		body["supersede_credential_id"] = r.supersede
	}
	err := api.Do(ctx, http.MethodPost, path, nil, body, out)
	var ae *apierr.Error
	if err == nil || !errors.As(err, &ae) || ae.Code != apierr.CodeReplacementRequired {
		return r.supersede != "" && err == nil, err
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
	body["supersede_credential_id"] = id
	return true, api.Do(ctx, http.MethodPost, path, nil, body, out)
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

func (a *app) secretAddCmd() *cobra.Command {
	var (
		job      jobFlag
		provider string
		fromEnv  bool
		rep      replaceFlags
	)
	c := &cobra.Command{
		Use:   "add ENV_VAR [--job UUID] [--provider P] [--from-env] [--yes | --supersede ID]",
		Short: "Store a hosted secret; the value comes from stdin, a hidden prompt or --from-env",
		Long: "Stores a hosted secret exported as ENV_VAR. The value is read from the environment variable of the\n" +
			"same name with --from-env, else from a hidden prompt when stdin is a terminal, else from stdin (one\n" +
			"trailing newline removed). It is never taken from a flag: a flag lands in the shell's history.\n" +
			"When an active secret exists for ENV_VAR, a terminal asks whether to replace it; elsewhere --yes\n" +
			"(or --supersede ID) is required. Replacing needs organization owner rights.",
		Args: exactArgs(1, "an environment variable name"),
		RunE: func(c *cobra.Command, args []string) error {
			env := args[0]
			if err := job.check(c); err != nil {
				return err
			}
			if err := rep.check(); err != nil {
				return err
			}
			if m := secrets.CheckEnvVar(env); m != "" {
				return usagef("ENV_VAR %s", m)
			}
			src := valueSource{}
			if fromEnv {
				src.fromEnv = env
			}
			value, err := a.readValue(src, "Value of "+env)
			if err != nil {
				return err
			}
			api, o, err := a.api()
			if err != nil {
				return err
			}
			body := map[string]any{"env_var": env, "value": string(value)}
			if job.id != "" {
				body["scope"], body["job_id"] = "job", job.id
			}
			if provider != "" {
				body["provider"] = provider
			}
			orgField(o, body)
			var rec secretRecord
			replaced, err := a.storeWithConfirm(a.ctx(c), api, "/v1/secrets", body, rep, func(e map[string]any) string {
				return "the active secret " + ending(e)
			}, &rec)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(rec)
			}
			verb := "Stored"
			if replaced {
				verb = "Replaced"
			}
			fmt.Fprintf(a.stdout, "%s %s (%s, %s, id %s)\n", verb, rec.EnvVar, rec.Scope, masked(rec.ValueLast4), rec.ID)
			return nil
		},
	}
	job.add(c)
	c.Flags().StringVar(&provider, "provider", "", "an optional provider label, e.g. anthropic")
	c.Flags().BoolVar(&fromEnv, "from-env", false, "read the value from the environment variable ENV_VAR")
	rep.add(c, "secret")
	a.addJSON(c)
	return c
}

func (a *app) secretListCmd() *cobra.Command {
	var (
		job    jobFlag
		status string
		pg     paging
	)
	c := &cobra.Command{
		Use:     "list [--job UUID] [--status active|revoked|all]",
		Aliases: []string{"ls"},
		Short:   "List hosted secrets (never their values: ****last4)",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := job.check(c); err != nil {
				return err
			}
			if err := pg.check(c); err != nil {
				return err
			}
			api, o, err := a.api()
			if err != nil {
				return err
			}
			q := url.Values{"status": {status}}
			if job.id != "" {
				q.Set("scope", "job")
				q.Set("job_id", job.id)
			}
			if o.Org != "" {
				q.Set("org", o.Org)
			}
			var out struct {
				Secrets []secretRecord `json:"secrets"`
			}
			if err := api.Do(a.ctx(c), http.MethodGet, "/v1/secrets", q, nil, &out); err != nil {
				return err
			}
			lo, hi, p := a.window(pg, len(out.Secrets))
			items := out.Secrets[lo:hi]
			switch {
			case a.json:
				return a.printJSON(newListPage(items, p))
			case a.quiet:
				for _, s := range items {
					fmt.Fprintln(a.stdout, s.ID)
				}
				return nil
			}
			t := a.newTable("ENV VAR", "SCOPE", "JOB", "VALUE", "STATUS", "CREATED", "LAST USED", "ID")
			for _, s := range items {
				t.row(s.EnvVar, s.Scope, orDash(s.JobID), masked(s.ValueLast4), s.Status, s.CreatedAt, orDash(s.LastUsedAt), s.ID)
			}
			if err := t.flush(); err != nil {
				return err
			}
			a.pageHint(pg, p, "secret")
			return nil
		},
	}
	job.add(c)
	c.Flags().StringVar(&status, "status", "active", "active, revoked or all")
	pg.add(c)
	a.addListFlags(c, "ids")
	return c
}

func (a *app) secretDeleteCmd() *cobra.Command {
	var (
		job   jobFlag
		purge bool
	)
	c := &cobra.Command{
		Use:   "delete ENV_VAR [--job UUID] [--purge]",
		Short: "Revoke the active secret of ENV_VAR (--purge: delete every record of it)",
		Args:  exactArgs(1, "an environment variable name"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := job.check(c); err != nil {
				return err
			}
			api, o, err := a.api()
			if err != nil {
				return err
			}
			body := map[string]any{"env_var": args[0], "purge": purge}
			if job.id != "" {
				body["scope"], body["job_id"] = "job", job.id
			}
			orgField(o, body)
			return a.printAffected(c, api, "/v1/secrets", body, args[0], purge)
		},
	}
	job.add(c)
	c.Flags().BoolVar(&purge, "purge", false, "delete every record of the secret (active and revoked) instead of revoking it")
	a.addJSON(c)
	return c
}

func (a *app) printAffected(c *cobra.Command, api *hub.API, path string, body map[string]any, what string, purge bool) error {
	var out struct {
		Affected int `json:"affected"`
	}
	if err := api.Do(a.ctx(c), http.MethodDelete, path, nil, body, &out); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(out)
	}
	verb := "Revoked"
	if purge {
		verb = "Purged"
	}
	if out.Affected == 0 {
		fmt.Fprintf(a.stdout, "Nothing to %s: %s has no %s record\n", strings.ToLower(verb[:len(verb)-1]), what, map[bool]string{true: "", false: "active "}[purge])
		return nil
	}
	fmt.Fprintf(a.stdout, "%s %s (%s)\n", verb, what, count(out.Affected, "record"))
	return nil
}

func (a *app) registryAddCmd() *cobra.Command {
	var (
		server, username, passwordEnv string
		rep                           replaceFlags
	)
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
			name := args[0]
			if err := requireFlags(c, "server", "username"); err != nil {
				return err
			}
			if err := rep.check(); err != nil {
				return err
			}
			for _, f := range []struct{ flag, msg string }{
				{"DISPLAY_NAME", secrets.CheckDisplayName(name)}, {"--server", secrets.CheckServer(server)}, {"--username", secrets.CheckUsername(username)},
			} {
				if f.msg != "" {
					return usagef("%s %s", f.flag, f.msg)
				}
			}
			value, err := a.readValue(valueSource{fromEnv: passwordEnv}, "Password for "+username+"@"+server)
			if err != nil {
				return err
			}
			api, o, err := a.api()
			if err != nil {
				return err
			}
			body := map[string]any{"display_name": name, "server": server, "username": username, "password": string(value)}
			orgField(o, body)
			var rec registryRecord
			replaced, err := a.storeWithConfirm(a.ctx(c), api, "/v1/registry-credentials", body, rep, func(e map[string]any) string {
				fp, _ := e["fingerprint"].(string)
				return fmt.Sprintf("the active registry credential %q %s (fingerprint %s)", name, ending(e), fp)
			}, &rec)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(rec)
			}
			verb := "Stored"
			if replaced {
				verb = "Replaced"
			}
			fmt.Fprintf(a.stdout, "%s registry credential %q for %s@%s (%s, %s, id %s)\n", verb, rec.DisplayName, rec.Username, rec.Server, rec.Fingerprint, masked(rec.ValueLast4), rec.ID)
			return nil
		},
	}
	c.Flags().StringVar(&server, "server", "", "the registry's host name with an optional port, e.g. ghcr.io")
	c.Flags().StringVar(&username, "username", "", "the account to sign in with")
	c.Flags().StringVar(&passwordEnv, "password-env", "", "read the password from this environment variable")
	rep.add(c, "credential")
	a.addJSON(c)
	return c
}

func (a *app) registryListCmd() *cobra.Command {
	var (
		status string
		pg     paging
	)
	c := &cobra.Command{
		Use:     "list [--status active|revoked|all]",
		Aliases: []string{"ls"},
		Short:   "List registry credentials (never their passwords: a fingerprint and ****last4)",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := pg.check(c); err != nil {
				return err
			}
			api, o, err := a.api()
			if err != nil {
				return err
			}
			q := url.Values{"status": {status}}
			if o.Org != "" {
				q.Set("org", o.Org)
			}
			var out struct {
				Items []registryRecord `json:"registry_credentials"`
			}
			if err := api.Do(a.ctx(c), http.MethodGet, "/v1/registry-credentials", q, nil, &out); err != nil {
				return err
			}
			lo, hi, p := a.window(pg, len(out.Items))
			items := out.Items[lo:hi]
			switch {
			case a.json:
				return a.printJSON(newListPage(items, p))
			case a.quiet:
				for _, r := range items {
					fmt.Fprintln(a.stdout, r.ID)
				}
				return nil
			}
			t := a.newTable("NAME", "SERVER", "USERNAME", "FINGERPRINT", "VALUE", "STATUS", "CREATED", "LAST USED", "ID")
			for _, r := range items {
				t.row(r.DisplayName, r.Server, r.Username, r.Fingerprint, masked(r.ValueLast4), r.Status, r.CreatedAt, orDash(r.LastUsedAt), r.ID)
			}
			if err := t.flush(); err != nil {
				return err
			}
			a.pageHint(pg, p, "credential")
			return nil
		},
	}
	c.Flags().StringVar(&status, "status", "active", "active, revoked or all")
	pg.add(c)
	a.addListFlags(c, "ids")
	return c
}

func (a *app) registryDeleteCmd() *cobra.Command {
	var purge bool
	c := &cobra.Command{
		Use:   "delete DISPLAY_NAME [--purge]",
		Short: "Revoke the active registry credential of that name (--purge: delete every record of it)",
		Args:  exactArgs(1, "a display name"),
		RunE: func(c *cobra.Command, args []string) error {
			api, o, err := a.api()
			if err != nil {
				return err
			}
			body := map[string]any{"display_name": args[0], "purge": purge}
			orgField(o, body)
			return a.printAffected(c, api, "/v1/registry-credentials", body, fmt.Sprintf("registry credential %q", args[0]), purge)
		},
	}
	c.Flags().BoolVar(&purge, "purge", false, "delete every record of the credential (active and revoked) instead of revoking it")
	a.addJSON(c)
	return c
}
