package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/wire/secretswire"
)

// registryAddOptions are the inputs of `podium hub registry-credentials add`.
type registryAddOptions struct {
	*app
	oneArg                        // the display name
	server, username, passwordEnv string
	serviceAccountFile            string
	rep                           replaceFlags
	// hostGiven is whether --registry-host (or --server) was given (Complete).
	hostGiven bool
}

func (a *app) registryAddCmd() *cobra.Command {
	return a.verb(&registryAddOptions{app: a}, "hub registry-credentials add", exactArgs(1, "a display name"))
}

// addFlags adds the verb's own flags to c.
func (o *registryAddOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.server, "registry-host", "", "the registry's host name with an optional port, e.g. us-docker.pkg.dev or ghcr.io")
	c.Flags().StringVar(&o.server, "server", "", "the registry's host name (an older name of --registry-host)")
	_ = c.Flags().MarkDeprecated("server", "use --registry-host")
	c.Flags().StringVar(&o.serviceAccountFile, "service-account-json", "", "a Google service-account key file (JSON; - for stdin): a GAR credential")
	c.Flags().StringVar(&o.username, "username", "", "the account to sign in with (a registry other than GAR)")
	c.Flags().StringVar(&o.passwordEnv, "password-env", "", "read the password from this environment variable")
	o.rep.add(c, "credential")
}

func (o *registryAddOptions) Complete(c *cobra.Command, args []string) error {
	o.hostGiven = c.Flags().Changed("registry-host") || c.Flags().Changed("server")
	return o.oneArg.Complete(c, args)
}

// Validate checks the argument and flags with the API's own field rules.
func (o *registryAddOptions) Validate() error {
	if !o.hostGiven {
		return usagef("--registry-host is required")
	}
	if (o.serviceAccountFile == "") == (o.username == "") {
		return usagef("give --service-account-json FILE (Google Artifact Registry) or --username (any other registry), one of them")
	}
	if o.serviceAccountFile != "" && o.passwordEnv != "" {
		return usagef("--password-env goes with --username; a service-account key comes from --service-account-json")
	}
	if err := o.rep.check(); err != nil {
		return err
	}
	checks := []struct{ flag, msg string }{
		{"DISPLAY_NAME", hubv1alpha1.CheckDisplayName(o.arg)}, {"--registry-host", hubv1alpha1.CheckServer(o.server)},
	}
	if o.username != "" {
		checks = append(checks, struct{ flag, msg string }{"--username", hubv1alpha1.CheckUsername(o.username)})
	}
	for _, f := range checks {
		if f.msg != "" {
			return usagef("%s %s", f.flag, f.msg)
		}
	}
	return nil
}

// body reads the key or the password and builds the request body.
func (o *registryAddOptions) body() (secretswire.StoreRegistry, error) {
	body := secretswire.StoreRegistry{RegistryHost: &o.server, DisplayName: &o.arg}
	if o.serviceAccountFile != "" {
		key, err := o.readKeyFile(o.serviceAccountFile)
		if err != nil {
			return body, err
		}
		// The file's text as a JSON string, as Harbor sends it; the API checks that it
		// is a service-account key.
		body.ServiceAccountJSON, err = json.Marshal(string(key))
		return body, err
	}
	value, err := o.readValue(valueSource{fromEnv: o.passwordEnv}, "Password for "+o.username+"@"+o.server)
	body.Username, body.Password = &o.username, secretswire.Ptr(string(value))
	return body, err
}

// readKeyFile reads a key file (- for stdin), at most the API's value limit.
func (a *app) readKeyFile(path string) ([]byte, error) {
	r := a.stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("--service-account-json: %v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, hubv1alpha1.MaxValueBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the service-account key: %w", err)
	}
	if len(b) == 0 || len(b) > hubv1alpha1.MaxValueBytes {
		return nil, usagef("--service-account-json must be a key file of 1 B to 64 KiB")
	}
	return b, nil
}

// Run reads the key or the password and stores the credential, asking before it
// replaces an active one.
func (o *registryAddOptions) Run(ctx context.Context) error {
	body, err := o.body()
	if err != nil {
		return err
	}
	rec, replaced, err := store[secretswire.RegistryRecord](ctx, o.app, o.rep, secretkind.Registry.Path, func(org, supersede *string) any {
		body.Org, body.SupersedeCredentialID = org, supersede
		return body
	}, func(e map[string]any) string {
		fp, _ := e["fingerprint"].(string)
		return fmt.Sprintf("the active registry credential %q %s (fingerprint %s)", o.arg, ending(e), fp)
	})
	if err != nil {
		return err
	}
	return o.secretPrinter().registryStored(rec, replaced)
}
