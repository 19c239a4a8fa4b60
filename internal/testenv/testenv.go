// Package testenv starts the real local control plane (kube-apiserver and etcd built by
// hack/controlplane.sh) for tests, with Podium's generated CRDs installed.
package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"podium.dev/podium/internal/scheme"
)

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Assets returns the directory holding kube-apiserver, etcd and kubectl:
// KUBEBUILDER_ASSETS when set, else what hack/controlplane.sh builds or finds cached.
func Assets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	out, err := exec.Command("bash", filepath.Join(RepoRoot(), "hack", "controlplane.sh")).Output()
	if err != nil {
		return "", fmt.Errorf("building the local control plane: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Kubectl returns the path of the pinned kubectl binary.
func Kubectl() (string, error) {
	dir, err := Assets()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "kubectl"), nil
}

// Start starts a control plane with Podium's CRDs and admission policies
// (config/admission) installed, the policies already enforced. Stop it with env.Stop().
func Start() (*envtest.Environment, *rest.Config, error) {
	assets, err := Assets()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		Scheme:                scheme.Scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, err
	}
	if err := ApplyAdmission(context.Background(), cfg); err != nil {
		_ = env.Stop()
		return nil, nil, err
	}
	return env, cfg, nil
}

// Namespace returns a namespace object to create, with a name generated from prefix.
func Namespace(prefix string) *corev1.Namespace {
	ns := &corev1.Namespace{}
	ns.GenerateName = prefix + "-"
	return ns
}
