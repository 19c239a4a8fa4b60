package main

import (
	"context"
	"path/filepath"

	"k8s.io/client-go/rest"

	"podium.dev/podium/internal/testenv"
)

// readServiceAccount is the read tier's ServiceAccount (config/read/rbac.yaml), in the
// operator's namespace: make dev runs the read tier as it, with its rights only.
const readServiceAccount = testenv.ReadServiceAccount

// readTokenLife is how long the read tier's token in .podium-dev/read.kubeconfig lives;
// each make dev mints a new one.
const readTokenLife = 365 * 24 * 60 * 60

// readKubeconfig mints a token of the read tier's ServiceAccount and writes a kubeconfig
// for the apiserver of cfg with it (and nothing else: no admin certificate), as the read
// tier's Pod would have, under state.
func readKubeconfig(ctx context.Context, cfg *rest.Config, state string) (string, error) {
	path := filepath.Join(state, "read.kubeconfig")
	return path, testenv.WriteReadKubeconfig(ctx, cfg, path, readTokenLife)
}
