package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"podium.dev/podium/internal/testenv"
)

// controlPlane runs kube-apiserver and etcd with Podium's CRDs until ctx ends, and
// writes an admin kubeconfig. etcd keeps its data in memory (/dev/shm when present) so
// that seeding measures the apiserver, not the disk.
func controlPlane(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("controlplane", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "where to write the admin kubeconfig")
	etcdFile := fs.String("etcd-url-file", "", "where to write etcd's client URL (for seed -etcd)")
	_ = fs.Parse(args)
	if *kubeconfig == "" {
		return fmt.Errorf("-kubeconfig is required")
	}
	assets, err := testenv.Assets()
	if err != nil {
		return err
	}
	dataDir := ""
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dataDir, err = os.MkdirTemp("/dev/shm", "podium-bench-etcd-"); err != nil {
			return err
		}
		defer os.RemoveAll(dataDir)
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(testenv.RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		ControlPlane:          envtest.ControlPlane{Etcd: &envtest.Etcd{DataDir: dataDir}},
	}
	if _, err := env.Start(); err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer func() { _ = env.Stop() }()
	admin, err := env.AddUser(envtest.User{Name: "bench-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(*kubeconfig, kc, 0o600); err != nil {
		return err
	}
	if *etcdFile != "" {
		if err := os.WriteFile(*etcdFile, []byte(env.ControlPlane.Etcd.URL.String()), 0o600); err != nil {
			return err
		}
	}
	fmt.Println("control plane ready")
	<-ctx.Done()
	return nil
}
