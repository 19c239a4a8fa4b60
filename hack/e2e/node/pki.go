package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// PKI is the cluster's certificates: one CA signs the apiserver's and kubelet's serving
// certificates and every component's client certificate; the ServiceAccount tokens are
// signed by an RSA key of their own.
type PKI struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
}

func (p *PKI) file(name string) string { return filepath.Join(p.dir, name) }

// makePKI writes the CA, the serving and client certificates and the kubeconfigs
// (admin's one level up, as dir/../kubeconfig).
//
//nolint:funlen // one certificate per component, in a flat list; a loop over a table would hide which names each gets
func makePKI(dir string) (*PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "podium-e2e-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	p := &PKI{dir: dir, caCert: caCert, caKey: caKey}
	if err := writePEM(p.file("ca.crt"), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	if err := writeKey(p.file("ca.key"), caKey); err != nil {
		return nil, err
	}
	// ServiceAccount token signing key.
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	if err := writeKey(p.file("sa.key"), sa); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.file("sa.pub"), "PUBLIC KEY", pub); err != nil {
		return nil, err
	}
	// Serving certificates.
	if err := p.issue("apiserver", "kube-apiserver", nil, true,
		[]string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
		[]net.IP{net.ParseIP(NodeIP), net.ParseIP(APIServerIP), net.ParseIP("127.0.0.1")}); err != nil {
		return nil, err
	}
	if err := p.issue("kubelet", "system:node:"+NodeName, []string{"system:nodes"}, true,
		[]string{NodeName}, []net.IP{net.ParseIP(NodeIP)}); err != nil {
		return nil, err
	}
	// Client certificates: the apiserver's to the kubelet, then one kubeconfig per user.
	if err := p.issue("apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, false, nil, nil); err != nil {
		return nil, err
	}
	server := fmt.Sprintf("https://%s:%d", NodeIP, APIPort)
	for _, u := range []struct {
		name, user string
		groups     []string
		out        string
	}{
		{"admin", "podium-e2e-admin", []string{"system:masters"}, filepath.Join(dir, "..", "kubeconfig")},
		{"kube-controller-manager", "system:kube-controller-manager", nil, ""},
		{"kube-scheduler", "system:kube-scheduler", nil, ""},
		{"kubelet-client", "system:node:" + NodeName, []string{"system:nodes"}, p.file("kubelet.kubeconfig")},
		{"kube-proxy", "system:kube-proxy", nil, ""},
	} {
		if err := p.issue(u.name, u.user, u.groups, false, nil, nil); err != nil {
			return nil, err
		}
		out := u.out
		if out == "" {
			out = p.file(u.name + ".kubeconfig")
		}
		if err := p.kubeconfig(out, server, u.name); err != nil {
			return nil, err
		}
	}
	return p, nil
}

var serial int64 = 1

// issue writes name.crt and name.key: a certificate for user cn in groups (the
// organizations), for serving (with the DNS names and IPs) or for a client.
func (p *PKI) issue(name, cn string, groups []string, serving bool, dns []string, ips []net.IP) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: cn, Organization: groups},
		NotBefore:    p.caCert.NotBefore,
		NotAfter:     p.caCert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	if serving {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return err
	}
	if err := writePEM(p.file(name+".crt"), "CERTIFICATE", der); err != nil {
		return err
	}
	return writeKey(p.file(name+".key"), key)
}

func (p *PKI) kubeconfig(out, server, name string) error {
	ca, err := os.ReadFile(p.file("ca.crt"))
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(p.file(name + ".crt"))
	if err != nil {
		return err
	}
	key, err := os.ReadFile(p.file(name + ".key"))
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["podium-e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["podium-e2e"] = &clientcmdapi.Context{Cluster: "podium-e2e", AuthInfo: name}
	cfg.CurrentContext = "podium-e2e"
	return clientcmd.WriteToFile(*cfg, out)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der)
}
