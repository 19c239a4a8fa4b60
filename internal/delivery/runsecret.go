package delivery

import (
	"crypto/rand"
	"encoding/json"
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
//
// With registry credentials it is of type kubernetes.io/dockerconfigjson: its
// .dockerconfigjson holds one auths entry per credential (the run's imagePullSecret),
// beside the env keys (a Secret of that type may hold other keys).
func RunSecret(namespace, name, kind, requester string, plan Plan) *corev1.Secret {
	data := make(map[string][]byte, len(plan.Delivered)+1)
	used := make([]UsedSecret, 0, len(plan.Delivered)+len(plan.Pulls))
	for _, d := range plan.Delivered {
		data[d.EnvVar] = d.value
		used = append(used, UsedSecret{EnvVar: d.EnvVar, Name: d.Secret.Name, UID: d.Secret.UID})
	}
	typ := corev1.SecretTypeOpaque
	if len(plan.Pulls) > 0 {
		typ = corev1.SecretTypeDockerConfigJson
		auths := map[string]json.RawMessage{}
		for _, d := range plan.Pulls {
			var cfg struct {
				Auths map[string]json.RawMessage `json:"auths"`
			}
			if json.Unmarshal(d.value, &cfg) != nil {
				continue
			}
			for server, entry := range cfg.Auths {
				auths[server] = entry
			}
			used = append(used, UsedSecret{EnvVar: d.EnvVar, Name: d.Secret.Name, UID: d.Secret.UID})
		}
		data[corev1.DockerConfigJsonKey] = dockerConfig(auths)
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
		Type: typ,
		Data: data,
	}
}

// RegistryKeyPrefix starts the entry of a registry credential in a run Secret's
// hub.podium.dev/hosted-secrets annotation (where env secrets have their variable).
const RegistryKeyPrefix = "registry:"

// RegistryKey is that entry's key for a credential of server.
func RegistryKey(server string) string { return RegistryKeyPrefix + server }

func dockerConfig(auths map[string]json.RawMessage) []byte {
	b, err := json.Marshal(map[string]map[string]json.RawMessage{"auths": auths})
	if err != nil {
		return []byte(`{"auths":{}}`)
	}
	return b
}

// DropValues removes from a run Secret's data what keys (entries of its
// hub.podium.dev/hosted-secrets annotation) delivered: an env key, or a registry's
// auths entry of .dockerconfigjson (which stays, valid, when it is emptied).
func DropValues(data map[string][]byte, keys []string) {
	for _, k := range keys {
		server, registry := strings.CutPrefix(k, RegistryKeyPrefix)
		if !registry {
			delete(data, k)
			continue
		}
		var cfg struct {
			Auths map[string]json.RawMessage `json:"auths"`
		}
		if json.Unmarshal(data[corev1.DockerConfigJsonKey], &cfg) != nil || cfg.Auths == nil {
			cfg.Auths = map[string]json.RawMessage{}
		}
		delete(cfg.Auths, server)
		data[corev1.DockerConfigJsonKey] = dockerConfig(cfg.Auths)
	}
}

// InjectPullSecret adds the run Secret to spec's imagePullSecrets (once).
func InjectPullSecret(spec *corev1.PodSpec, secretName string) {
	for _, r := range spec.ImagePullSecrets {
		if r.Name == secretName {
			return
		}
	}
	spec.ImagePullSecrets = append(spec.ImagePullSecrets, corev1.LocalObjectReference{Name: secretName})
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
