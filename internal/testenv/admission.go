package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
)

// AdmissionDir holds the admission policies Podium ships (config/admission).
func AdmissionDir() string { return filepath.Join(RepoRoot(), "config", "admission") }

// ApplyAdmission creates every object of the YAML files in config/admission (the
// ValidatingAdmissionPolicies and their bindings) and waits until the apiserver
// enforces them: a policy is loaded by the apiserver's admission plugin a moment after
// it is created, and a test that ran before would see a hole that does not exist.
func ApplyAdmission(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(AdmissionDir(), "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			if err := c.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s: creating %s %s: %w", f, u.GetKind(), u.GetName(), err)
			}
		}
	}
	if err := awaitOwnershipPolicy(ctx, c, cfg); err != nil {
		return err
	}
	if err := awaitRunPolicies(ctx, c, cfg); err != nil {
		return err
	}
	return awaitRowCreatedBy(ctx, c)
}

// awaitRowCreatedBy waits until a server-side dry-run create of a LeaderboardRow comes
// back with its forged creator, last author and board label replaced by the row
// metadata policy (config/admission/row_metadata.yaml).
func awaitRowCreatedBy(ctx context.Context, c client.Client) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		row := &hubv1alpha1.LeaderboardRow{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "admission-probe",
				Annotations: map[string]string{hubv1alpha1.AnnotationCreatedBy: "forged", hubv1alpha1.AnnotationUpdatedBy: "forged"},
				Labels:      map[string]string{hubv1alpha1.LabelLeaderboard: "forged"}},
			Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "admission-probe"},
		}
		err := c.Create(ctx, row, client.DryRunAll)
		if err == nil && row.Annotations[hubv1alpha1.AnnotationCreatedBy] != "forged" && row.Annotations[hubv1alpha1.AnnotationUpdatedBy] != "forged" &&
			row.Labels[hubv1alpha1.LabelLeaderboard] == row.Spec.Leaderboard {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the forged creator, author or board label was kept")
			}
			return fmt.Errorf("the row admission policies were not applied within 30 s (last answer: %w)", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// probeUser is the user awaitOwnershipPolicy acts as: allowed by RBAC to create
// HostedSecrets, so that only the admission policy can refuse it.
const probeUser = "podium:admission-probe"

// awaitOwnershipPolicy waits until a server-side dry-run create of a HostedSecret
// naming another owner is refused by the ownership policy.
func awaitOwnershipPolicy(ctx context.Context, c client.Client, cfg *rest.Config) error {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "podium-admission-probe"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{hubv1alpha1.GroupVersion.Group}, Resources: []string{"hostedsecrets"}, Verbs: []string{"create"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "podium-admission-probe"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: probeUser}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	defer func() {
		_ = c.Delete(context.Background(), binding)
		_ = c.Delete(context.Background(), role)
	}()

	probeCfg := rest.CopyConfig(cfg)
	probeCfg.Impersonate = rest.ImpersonationConfig{UserName: probeUser}
	probe, err := client.New(probeCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	hs := &hubv1alpha1.HostedSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "admission-probe"},
		Spec: hubv1alpha1.HostedSecretSpec{
			Scope: hubv1alpha1.ScopeUser, Owner: "someone-else", EnvVar: "PROBE",
			SecretRef: hubv1alpha1.SecretValueRef{Name: "admission-probe"},
		},
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := probe.Create(ctx, hs.DeepCopy(), client.DryRunAll)
		var status apierrors.APIStatus
		if apierrors.IsForbidden(err) && errors.As(err, &status) && strings.Contains(status.Status().Message, "spec.owner") {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the create was allowed")
			}
			return fmt.Errorf("the HostedSecret ownership policy was not enforced within 30 s (last answer: %w)", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// awaitRunPolicies waits until the run policies (config/admission/run_integrity.yaml,
// run_identity.yaml) are enforced: as probeUser, a server-side dry-run create of a Pod
// running as a ServiceAccount that stands for a Podium user, and a dry-run update of the
// image of a PodTemplate recorded as another requester's delivered run, are both refused.
func awaitRunPolicies(ctx context.Context, c client.Client, cfg *rest.Config) error {
	const ns, name = "default", "podium-admission-probe-runs"
	user := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{hubv1alpha1.GroupVersion.Group}, Resources: []string{"hostedsecrets"}, Verbs: []string{"create"}}},
	}
	userBinding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-user"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	runsRole := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-runs"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods", "podtemplates"}, Verbs: []string{"create", "update"}}},
	}
	probeBinding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-runs"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: runsRole.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: probeUser}},
	}
	delivered := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{
				Labels:      map[string]string{"hub.podium.dev/run-secret": "podium-run-probe"},
				Annotations: map[string]string{"hub.podium.dev/requester": "someone-else"},
			},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "probe:1"}}},
		},
	}
	objs := []client.Object{user, role, userBinding, runsRole, probeBinding, delivered}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	defer func() {
		for i := len(objs) - 1; i >= 0; i-- {
			_ = c.Delete(context.Background(), objs[i])
		}
	}()

	probeCfg := rest.CopyConfig(cfg)
	probeCfg.Impersonate = rest.ImpersonationConfig{UserName: probeUser}
	probe, err := client.New(probeCfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	refused := func(err error, rule string) bool {
		var status apierrors.APIStatus
		return apierrors.IsForbidden(err) && errors.As(err, &status) && strings.Contains(status.Status().Message, rule)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.PodSpec{ServiceAccountName: name, Containers: []corev1.Container{{Name: "c", Image: "probe:1"}}},
		}
		errIdentity := probe.Create(ctx, pod, client.DryRunAll)
		changed := &corev1.PodTemplate{}
		errIntegrity := c.Get(ctx, client.ObjectKeyFromObject(delivered), changed)
		if errIntegrity == nil {
			changed.Template.Spec.Containers[0].Image = "probe:2"
			errIntegrity = probe.Update(ctx, changed, client.DryRunAll)
		}
		if refused(errIdentity, "users cannot be impersonated") && refused(errIntegrity, "cannot be changed under its owner") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the run admission policies were not enforced within 30 s (last answers: %w; %w)", errIdentity, errIntegrity)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
