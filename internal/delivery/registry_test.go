package delivery_test

import (
	"encoding/json"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// auths reads the registries of a run Secret's .dockerconfigjson.
func auths(s *corev1.Secret) map[string]struct{ Username, Password string } {
	var cfg struct {
		Auths map[string]struct{ Username, Password string }
	}
	ExpectWithOffset(1, json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &cfg)).To(Succeed())
	return cfg.Auths
}

var _ = Describe("Delivery of registry credentials", func() {
	It("hands the org's credentials to a Pod as an imagePullSecret, warns about missing ones, and drops a revoked one", func() {
		acme := newOrg("registry")
		alice, bob := newPerson(acme, "alice"), newPerson(acme, "bob")
		for _, c := range []map[string]any{
			{"display_name": "GHCR bot", "registry_host": "ghcr.io", "username": "bot", "password": "ghp_delivery-token-0001"},
			{"display_name": "Mirror", "registry_host": "registry.example.com:5000", "username": "ci", "password": "mirror-token-0002"},
			{"display_name": "GHCR again", "registry_host": "ghcr.io", "username": "other", "password": "ghp_delivery-token-0003"},
		} {
			code, body := call(bob, http.MethodPost, "/v1/registry-credentials", c)
			Expect(code).To(Equal(http.StatusCreated), string(body))
		}
		store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-alice-000000001"})

		By("alice's Pod asks for two of bob's org credentials, one missing, one for a server already served, and a key")
		created, err := alice.CS.CoreV1().Pods(acme.Name).Create(ctx, pod("pull", map[string]string{
			hubv1alpha1.AnnotationRegistryCredentials: "GHCR bot, Mirror,Nope,GHCR again,bad;name",
			hubv1alpha1.AnnotationSecrets:             "ANTHROPIC_API_KEY",
		}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		name := created.Labels[hubv1alpha1.LabelRunSecret]
		Expect(created.Spec.ImagePullSecrets).To(ConsistOf(corev1.LocalObjectReference{Name: name}))
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationDeliveredRegistry, "GHCR bot,Mirror"))
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationDelivered, "ANTHROPIC_API_KEY"))
		Expect(alice.warnings.take()).To(ContainElements(
			ContainSubstring(`registry credential "Nope" is not delivered`),
			ContainSubstring(`"GHCR again" is not delivered: "GHCR bot" already signs in to ghcr.io`),
			ContainSubstring(`"bad;name" is not a registry credential's display name`),
		))
		s := runSecret(acme.Name, name)
		Expect(s.Type).To(Equal(corev1.SecretTypeDockerConfigJson))
		Expect(auths(s)).To(HaveLen(2))
		Expect(auths(s)["ghcr.io"].Password).To(Equal("ghp_delivery-token-0001"))
		Expect(auths(s)["registry.example.com:5000"].Username).To(Equal("ci"))
		Expect(string(s.Data["ANTHROPIC_API_KEY"])).To(Equal("sk-ant-alice-000000001"))

		By("last_used_at is set on the delivered credentials")
		code, body := call(bob, http.MethodGet, "/v1/registry-credentials", nil)
		Expect(code).To(Equal(http.StatusOK))
		var list struct {
			Items []struct {
				DisplayName string  `json:"display_name"`
				LastUsedAt  *string `json:"last_used_at"`
			} `json:"registry_credentials"`
		}
		Expect(json.Unmarshal(body, &list)).To(Succeed())
		for _, r := range list.Items {
			Expect(r.LastUsedAt != nil).To(Equal(r.DisplayName != "GHCR again"), r.DisplayName)
		}

		By("a Pod without the annotation gets no imagePullSecret; an update cannot forge the record")
		plain, err := alice.CS.CoreV1().Pods(acme.Name).Create(ctx, pod("plain", map[string]string{
			hubv1alpha1.AnnotationDeliveredRegistry: "GHCR bot", // forged, so the webhook sees it and removes it
		}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(plain.Spec.ImagePullSecrets).To(BeEmpty())
		Expect(plain.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationDeliveredRegistry))

		By("revoking a credential removes its entry from the run Secret of the Pod that has not started")
		code, body = call(bob, http.MethodDelete, "/v1/registry-credentials", map[string]any{"display_name": "GHCR bot"})
		Expect(code).To(Equal(http.StatusOK), string(body))
		Eventually(func() map[string]struct{ Username, Password string } { return auths(runSecret(acme.Name, name)) }).Should(And(
			HaveLen(1), HaveKey("registry.example.com:5000")))
		Expect(runSecret(acme.Name, name).Data).To(HaveKey("ANTHROPIC_API_KEY"))
	})
})
