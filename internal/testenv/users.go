package testenv

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/scheme"
)

// TokenConfig is cfg without its credentials, sending token instead: the apiserver
// sees whoever holds token (a ServiceAccount's, as ServiceAccountToken returns), as
// kubectl with that token would be seen.
func TokenConfig(cfg *rest.Config, token string) *rest.Config {
	c := rest.AnonymousClientConfig(cfg)
	c.BearerToken = token
	return c
}

// ClientAs is a client acting with token (TokenConfig).
func ClientAs(cfg *rest.Config, token string) (client.Client, error) {
	return client.New(TokenConfig(cfg, token), client.Options{Scheme: scheme.Scheme})
}

// ClientsetAs is a clientset acting with token (TokenConfig); the warnings the
// apiserver sends back go to warnings (nil: client-go's default handler).
func ClientsetAs(cfg *rest.Config, token string, warnings rest.WarningHandler) (*kubernetes.Clientset, error) {
	c := TokenConfig(cfg, token)
	if warnings != nil {
		c.WarningHandler = warnings
	}
	return kubernetes.NewForConfig(c)
}

// BindClusterRole creates the RoleBinding ns/name that grants clusterRole in ns to the
// ServiceAccount saNS/sa.
func BindClusterRole(ctx context.Context, cs kubernetes.Interface, ns, name, clusterRole, saNS, sa string) error {
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: saNS}},
	}
	_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
	return err
}

// Allowed says whether the user cs acts as may verb the resource of group ("" for the
// core group) in ns, as the apiserver's authorizer answers it now (a
// SelfSubjectAccessReview). A RoleBinding reaches the authorizer a moment after it is
// created: a test waits until this is true before it acts on the new right.
func Allowed(ctx context.Context, cs kubernetes.Interface, ns, verb, group, resource string) (bool, error) {
	r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: ns, Verb: verb, Group: group, Resource: resource,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}
