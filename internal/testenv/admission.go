package testenv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
		if err := ApplyFile(ctx, c, f); err != nil {
			return err
		}
	}
	if err := awaitOwnershipPolicy(ctx, c, cfg); err != nil {
		return err
	}
	if err := awaitRunSecretPolicies(ctx, c, cfg); err != nil {
		return err
	}
	if err := awaitRunPolicies(ctx, c, cfg); err != nil {
		return err
	}
	return awaitRowCreatedBy(ctx, c)
}

// awaitRowCreatedBy waits until a server-side dry-run create of a LeaderboardRow comes
// back with its creator and last author recorded and its forged board label replaced
// by the row metadata policy (config/admission/row_metadata.yaml). The probe sends no
// creator: it runs as an admin, whose authors a create keeps (the restore verb).
func awaitRowCreatedBy(ctx context.Context, c client.Client) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		row := &hubv1alpha1.LeaderboardRow{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "admission-probe",
				Labels: map[string]string{hubv1alpha1.LabelLeaderboard: "forged"}},
			Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "admission-probe"},
		}
		err := c.Create(ctx, row, client.DryRunAll)
		if err == nil && row.Annotations[hubv1alpha1.AnnotationCreatedBy] != "" && row.Annotations[hubv1alpha1.AnnotationUpdatedBy] != "" &&
			row.Labels[hubv1alpha1.LabelLeaderboard] == row.Spec.Leaderboard {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("no creator or author was recorded, or the forged board label was kept")
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

// probeUser is the user the policy probes act as: allowed by RBAC to create
// HostedSecrets and Pods, so that only an admission policy can refuse it.
const probeUser = "podium:admission-probe"

// probeClient is a client acting as probeUser, with the RBAC that user needs.
func probeClient(ctx context.Context, c client.Client, cfg *rest.Config) (client.Client, error) {
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "podium-admission-probe"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{hubv1alpha1.GroupVersion.Group}, Resources: []string{"hostedsecrets"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "secrets"}, Verbs: []string{"create"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "podium-admission-probe"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: probeUser}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
	}
	probeCfg := rest.CopyConfig(cfg)
	probeCfg.Impersonate = rest.ImpersonationConfig{UserName: probeUser}
	return client.New(probeCfg, client.Options{Scheme: scheme.Scheme})
}

// awaitOwnershipPolicy waits until a server-side dry-run create of a HostedSecret
// naming another owner is refused by the ownership policy.
func awaitOwnershipPolicy(ctx context.Context, c client.Client, cfg *rest.Config) error {
	probe, err := probeClient(ctx, c, cfg)
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
	return awaitRefused(ctx, "the HostedSecret ownership policy", func() error { return probe.Create(ctx, hs.DeepCopy(), client.DryRunAll) }, "spec.owner")
}

// GrantedProbeSecret is a name reserved for Secrets granted to hosted secrets
// (podium-granted-*) that a Pod names to see the granted Secret rule enforced; no Secret
// of that name is created.
const GrantedProbeSecret = "podium-granted-admission-probe"

// awaitRunSecretPolicies waits until server-side dry-run creates of Pods naming another
// run's Secret and a granted Secret are refused by the run Secret binding policy, and a
// dry-run create of a Secret granted under a name not reserved for it is refused by the
// granted Secret name policy (config/admission/run_secret_*.yaml).
func awaitRunSecretPolicies(ctx context.Context, c client.Client, cfg *rest.Config) error {
	probe, err := probeClient(ctx, c, cfg)
	if err != nil {
		return err
	}
	podNaming := func(secret string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "admission-probe"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", Env: []corev1.EnvVar{{Name: "PROBE",
				ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "PROBE"}}}}}}},
		}
	}
	if err := awaitRefused(ctx, "the run Secret binding policy", func() error {
		return probe.Create(ctx, podNaming("podium-run-admissionprobe"), client.DryRunAll)
	}, "podium-run-binding"); err != nil {
		return err
	}
	if err := awaitRefused(ctx, "the granted Secret rule", func() error {
		return probe.Create(ctx, podNaming(GrantedProbeSecret), client.DryRunAll)
	}, "podium-granted-secret"); err != nil {
		return err
	}
	return awaitRefused(ctx, "the granted Secret name policy", func() error {
		return probe.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "admission-probe-granted",
			Labels: map[string]string{hubv1alpha1.LabelHostedSecret: "admission-probe"}}}, client.DryRunAll)
	}, "podium-granted-secret-name")
}

// awaitRefused retries create (at most 30 s) until it is refused as Forbidden (or, for a
// rule on a name, Invalid) with a message containing want.
func awaitRefused(ctx context.Context, what string, create func() error, want string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := create()
		var status apierrors.APIStatus
		if (apierrors.IsForbidden(err) || apierrors.IsInvalid(err)) && errors.As(err, &status) && strings.Contains(status.Status().Message, want) {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the create was allowed")
			}
			return fmt.Errorf("%s was not enforced within 30 s (last answer: %w)", what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// runPolicyProbe is what awaitRunPolicies creates in ns, in creation order: a
// ServiceAccount name that stands for a Podium user (it may create hosted secrets),
// the right of probeUser to create Pods and change PodTemplates, and a PodTemplate
// recorded as another requester's delivered run (also returned alone).
func runPolicyProbe(ns, name string) ([]client.Object, *corev1.PodTemplate) {
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
	return []client.Object{user, role, userBinding, runsRole, probeBinding, delivered}, delivered
}

// awaitRunPolicies waits until the run policies (config/admission/run_integrity.yaml,
// and run_isolation.yaml's rule podium-run-identity) are enforced: as probeUser, a server-side dry-run create of a Pod
// running as a ServiceAccount that stands for a Podium user, and a dry-run update of the
// image of a PodTemplate recorded as another requester's delivered run, are both refused.
func awaitRunPolicies(ctx context.Context, c client.Client, cfg *rest.Config) error {
	const ns, name = "default", "podium-admission-probe-runs"
	objs, delivered := runPolicyProbe(ns, name)
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
