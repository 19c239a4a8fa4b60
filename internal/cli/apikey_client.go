package cli

import (
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/cli/hub"
)

// The commands that talk to Podium's HTTP API sign in with the kubeconfig's bearer
// token, or with a Podium API key (docs/cli.md, "Signing in with an API key"): from
// --api-key-file, else PODIUM_API_KEY. The key is exchanged for an access token at
// /v1/api-key-exchange; it is never printed and never part of an error.

// addEndpointFlags adds --endpoint and --api-key-file to a command of the HTTP API.
func (a *app) addEndpointFlags(c *cobra.Command) {
	c.PersistentFlags().StringVar(&a.endpoint, "endpoint", "", "Podium's HTTP endpoint (default: PODIUM_ENDPOINT, else the one recorded by auth login)")
	c.PersistentFlags().StringVar(&a.apiKeyFile, "api-key-file", "", "sign in with the Podium API key in this file (- for stdin) instead of the kubeconfig (default: "+hub.APIKeyEnv+" when set)")
}

// apiKey returns the API key to sign in with and where it came from, or "" for the
// kubeconfig's credentials.
func (a *app) apiKey() (key, source string, err error) {
	if a.apiKeyFile != "" {
		var b []byte
		if a.apiKeyFile == "-" {
			b, err = io.ReadAll(io.LimitReader(a.stdin, 4096))
		} else {
			b, err = os.ReadFile(a.apiKeyFile)
		}
		if err != nil {
			// The file's name and the reason; never its contents.
			return "", "", apierr.New(http.StatusBadRequest, apierr.CodeBadRequest, "--api-key-file: %v", err)
		}
		return strings.TrimSpace(string(b)), "--api-key-file", nil
	}
	if v, ok := os.LookupEnv(hub.APIKeyEnv); ok {
		return v, hub.APIKeyEnv, nil
	}
	return "", "", nil
}

// connectAPI connects to endpoint with an API key when one is given, else as the
// kubeconfig's user.
func (a *app) connectAPI(o hub.Options, endpoint string) (*hub.API, error) {
	key, source, err := a.apiKey()
	if err != nil {
		return nil, err
	}
	if source != "" {
		return hub.NewAPIWithKey(endpoint, key, source)
	}
	return hub.NewAPI(o, endpoint)
}
