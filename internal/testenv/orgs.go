package testenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// ApplyOrgRoles creates the ClusterRoles shipped in config/rbac/org_roles.yaml, so that
// tests exercise the real file.
func ApplyOrgRoles(ctx context.Context, cs kubernetes.Interface) error {
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "rbac", "org_roles.yaml"))
	if err != nil {
		return err
	}
	for _, doc := range strings.Split(string(data), "\n---") {
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
			return err
		}
		if role.Name == "" {
			continue
		}
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// ServiceAccountToken creates the ServiceAccount ns/name, binds it to clusterRole in ns
// (unless clusterRole is ""), and returns a token for it, as `kubectl create token` would.
func ServiceAccountToken(ctx context.Context, cs kubernetes.Interface, ns, name, clusterRole string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	if clusterRole != "" {
		if err := BindClusterRole(ctx, cs, ns, name+"-"+clusterRole, clusterRole, ns, name); err != nil {
			return "", err
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tr.Status.Token, nil
}
