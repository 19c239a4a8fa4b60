package main

import (
	"context"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"podium.dev/podium/internal/testenv"
)

// readServiceAccount is the read tier's ServiceAccount (config/read/rbac.yaml), in the
// operator's namespace: make dev runs the read tier as it, with its rights only.
const readServiceAccount = "podium-read"

// readTokenLife is how long the read tier's token in .podium-dev/read.kubeconfig lives;
// each make dev mints a new one.
const readTokenLife = 365 * 24 * 60 * 60

// readKubeconfig mints a token of the read tier's ServiceAccount and writes a kubeconfig
// for the apiserver of cfg with it (and nothing else: no admin certificate), as the read
// tier's Pod would have, under state.
func readKubeconfig(ctx context.Context, cfg *rest.Config, state string) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(testenv.DeliveryNamespace).CreateToken(ctx, readServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](readTokenLife)}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["dev"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[readServiceAccount] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["read"] = &clientcmdapi.Context{Cluster: "dev", AuthInfo: readServiceAccount}
	kc.CurrentContext = "read"
	path := filepath.Join(state, "read.kubeconfig")
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, data, 0o600)
}
