package testenv

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"podium.dev/podium/internal/controllermanager"
)

// StartControllerManager runs kube-controller-manager's garbage collector and namespace
// controller against env, for the suites that test what they do (a deleted board takes
// its rows; a deleted namespace goes away). Its log goes to out (nil discards it). Stop
// it before env.
func StartControllerManager(ctx context.Context, env *envtest.Environment, out io.Writer) (*controllermanager.Process, error) {
	return startControllerManager(ctx, env, out, controllermanager.Options{})
}

// WorkloadControllers are the controllers of kube-controller-manager that make Pods (and
// a CronJob's Jobs, a Deployment's ReplicaSets) from templates, with the garbage
// collector.
var WorkloadControllers = []string{
	"job-controller", "cronjob-controller", "deployment-controller", "replicaset-controller",
	"statefulset-controller", "daemonset-controller", "replicationcontroller-controller",
	"garbage-collector-controller",
}

// StartWorkloadControllers runs kube-controller-manager's WorkloadControllers against
// env, each as its own ServiceAccount (--use-service-account-credentials): the users a
// real cluster's controllers create Pods as. There is no kubelet: the Pods stay pending.
func StartWorkloadControllers(ctx context.Context, env *envtest.Environment, out io.Writer) (*controllermanager.Process, error) {
	return startControllerManager(ctx, env, out, controllermanager.Options{Controllers: WorkloadControllers, ServiceAccountCredentials: true})
}

func startControllerManager(ctx context.Context, env *envtest.Environment, out io.Writer, o controllermanager.Options) (*controllermanager.Process, error) {
	dir, kubeconfig, err := adminKubeconfig(env, nil, "kube-controller-manager", "podium-kcm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) // read once, at start (it embeds its credentials)
	o.Binary, o.Kubeconfig, o.Output = controllermanager.BinaryIn(env.BinaryAssetsDirectory), kubeconfig, out
	return controllermanager.Start(ctx, o)
}

// adminKubeconfig writes the kubeconfig of a new cluster admin called name
// (AdminKubeconfig) into a new directory dir (pattern as os.MkdirTemp's); the caller
// removes dir.
func adminKubeconfig(env *envtest.Environment, cfg *rest.Config, name, pattern string) (dir, kubeconfig string, err error) {
	if dir, err = os.MkdirTemp("", pattern); err != nil {
		return "", "", err
	}
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := AdminKubeconfig(env, cfg, name, kubeconfig); err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	return dir, kubeconfig, nil
}

// AdminKubeconfig adds a cluster admin called name (system:masters) to env, its client
// configuration based on cfg (nil: env's), and writes its kubeconfig, which embeds its
// credentials, at path (mode 0600): what a program run by a test (kubectl, podium, a
// second operator) reads.
func AdminKubeconfig(env *envtest.Environment, cfg *rest.Config, name, path string) error {
	admin, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		return err
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, kc, 0o600)
}
