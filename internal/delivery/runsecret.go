package delivery

import (
	"crypto/rand"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Kinds of runs.
const (
	KindJob = "Job"
	KindPod = "Pod"
)

// RunSecretName is a fresh name for a run Secret. It is chosen before the Job or Pod has
// a name (generateName is resolved after admission) and fits in a label value.
func RunSecretName() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "podium-run-" + string(b)
}

// RunSecret is the Secret a run gets its values from: one key per delivered variable.
// It carries Podium's managed-by label (so the operator's cache holds it) and names the
// HostedSecrets it copies, never a value outside its data.
func RunSecret(namespace, name, kind, requester string, plan Plan) *corev1.Secret {
	data := make(map[string][]byte, len(plan.Delivered))
	used := make([]UsedSecret, 0, len(plan.Delivered))
	for _, d := range plan.Delivered {
		data[d.EnvVar] = d.value
		used = append(used, UsedSecret{EnvVar: d.EnvVar, Name: d.Secret.Name, UID: d.Secret.UID})
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace,
			Name:      name,
			Labels: map[string]string{
				hubv1alpha1.LabelManagedBy: hubv1alpha1.ManagedByPodium,
				hubv1alpha1.LabelRunFor:    kind,
			},
			Annotations: map[string]string{
				hubv1alpha1.AnnotationRequester:        requester,
				hubv1alpha1.AnnotationRunHostedSecrets: FormatUsed(used),
			},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
}

// UsedSecret is one HostedSecret a run Secret holds the value of.
type UsedSecret struct {
	EnvVar string
	Name   string
	UID    types.UID
}

// FormatUsed is the AnnotationRunHostedSecrets value: "ENV=name/uid,...", sorted.
func FormatUsed(used []UsedSecret) string {
	parts := make([]string, len(used))
	for i, u := range used {
		parts[i] = u.EnvVar + "=" + u.Name + "/" + string(u.UID)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// ParseUsed reads AnnotationRunHostedSecrets; malformed entries are skipped.
func ParseUsed(s string) []UsedSecret {
	var out []UsedSecret
	for _, p := range splitList(s) {
		env, ref, ok := strings.Cut(p, "=")
		name, uid, ok2 := strings.Cut(ref, "/")
		if ok && ok2 && env != "" && name != "" && uid != "" {
			out = append(out, UsedSecret{EnvVar: env, Name: name, UID: types.UID(uid)})
		}
	}
	return out
}

// InjectEnv points every container and init container of spec at the run Secret for
// each delivered variable (secretKeyRef, not optional: a run Secret that lost a key
// must not start a container without it). A variable a container sets itself is left
// as the container has it; the returned warnings say so.
func InjectEnv(spec *corev1.PodSpec, secretName string, names []string) []string {
	var warnings []string
	inject := func(c *corev1.Container) {
		own := map[string]bool{}
		for _, e := range c.Env {
			own[e.Name] = true
		}
		for _, n := range names {
			if own[n] {
				warnings = append(warnings, fmt.Sprintf("container %s sets %s itself; the hosted secret is not injected into it", c.Name, n))
				continue
			}
			c.Env = append(c.Env, corev1.EnvVar{Name: n, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: secretName},
				Key:                  n,
				Optional:             ptr.To(false),
			}}})
		}
	}
	for i := range spec.InitContainers {
		inject(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		inject(&spec.Containers[i])
	}
	return warnings
}
