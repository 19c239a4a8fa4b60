package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"podium.dev/podium/internal/scheme"
)

// ReadServiceAccount is the read tier's ServiceAccount (config/read/rbac.yaml), in
// DeliveryNamespace.
const ReadServiceAccount = "podium-read"

// readTokenLife is how long the token of a read tier a test starts lives.
const readTokenLife = 4 * 60 * 60

// StartReadProcess runs the built binary as the read tier ($PODIUM_BIN/podium-operator
// --role=read), as its Deployment runs it: config/read/rbac.yaml applied as shipped, a
// kubeconfig holding only a token of podium-read (no admin certificate, so it cannot get
// a Secret: what it cannot do here, it cannot do in a cluster), API keys and access
// tokens checked with the operator at operatorURL, its HTTP API on a free 127.0.0.1
// port. It stops when ctx ends (and with the test process). Its log goes to out.
func StartReadProcess(ctx context.Context, cfg *rest.Config, operatorURL string, out io.Writer) (*Operator, error) {
	bin := os.Getenv("PODIUM_BIN")
	if bin == "" {
		return nil, errors.New("PODIUM_BIN is not set (make test sets it to the directory of the built binaries)")
	}
	if err := ensureNamespace(ctx, cfg, DeliveryNamespace); err != nil {
		return nil, err
	}
	admin, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	if err := ApplyFile(ctx, admin, filepath.Join(RepoRoot(), "config", "read", "rbac.yaml")); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "podium-read-")
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := WriteReadKubeconfig(ctx, cfg, kubeconfig, readTokenLife); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return startBinary(ctx, "the read tier process", bin, dir, out,
		"--role=read", "--kubeconfig", kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--operator-url", operatorURL)
}

// WriteReadKubeconfig mints a token of the read tier's ServiceAccount living life
// seconds and writes, at path (mode 0600), a kubeconfig for the apiserver of cfg with
// that token and nothing else, as the read tier's Pod has.
func WriteReadKubeconfig(ctx context.Context, cfg *rest.Config, path string, life int64) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	tr, err := cs.CoreV1().ServiceAccounts(DeliveryNamespace).CreateToken(ctx, ReadServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(life)}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	return WriteTokenKubeconfig(cfg, tr.Status.Token, "", path)
}

// WriteTokenKubeconfig writes, at path (mode 0600), a kubeconfig for the apiserver of cfg
// with token and nothing else, its context's namespace namespace ("" for none).
func WriteTokenKubeconfig(cfg *rest.Config, token, namespace, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["podium"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["token"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["token"] = &clientcmdapi.Context{Cluster: "podium", AuthInfo: "token", Namespace: namespace}
	kc.CurrentContext = "token"
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// ApplyFile creates every object of a multi-document YAML file (one that exists already
// is left as it is).
func ApplyFile(ctx context.Context, c client.Client, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, doc := range strings.Split(string(data), "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if err := c.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: creating %s %s: %w", path, u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}
