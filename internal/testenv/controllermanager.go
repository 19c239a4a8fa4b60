package testenv

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"podium.dev/podium/internal/controllermanager"
)

// StartControllerManager runs kube-controller-manager's garbage collector and namespace
// controller against env, for the suites that test what they do (a deleted board takes
// its rows; a deleted namespace goes away). Its log goes to out (nil discards it). Stop
// it before env.
func StartControllerManager(ctx context.Context, env *envtest.Environment, out io.Writer) (*controllermanager.Process, error) {
	admin, err := env.AddUser(envtest.User{Name: "kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "podium-kcm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) // read once, at start (it embeds its credentials)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return nil, err
	}
	return controllermanager.Start(ctx, controllermanager.Options{
		Binary:     controllermanager.BinaryIn(env.BinaryAssetsDirectory),
		Kubeconfig: kubeconfig,
		Output:     out,
	})
}
