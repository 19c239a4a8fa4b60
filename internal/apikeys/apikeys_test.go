package apikeys_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/testenv"
)

type created struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	User      string  `json:"user"`
	ExpiresAt *string `json:"expires_at"`
	Key       string  `json:"key"`
}

func createKey(p person, body map[string]any) created {
	GinkgoHelper()
	code, out := call(http.MethodPost, "/v1/api-keys", p.Token, body)
	Expect(code).To(Equal(http.StatusCreated), string(out))
	return decode[created](out)
}

func secretStore(p person, key, env string) int {
	GinkgoHelper()
	code, _ := call(http.MethodPost, "/v1/secrets", key, map[string]any{"env_var": env, "value": "sk-apikey-test-" + env, "org": p.NS})
	return code
}

var _ = Describe("API keys", func() {
	var (
		org   string
		owner person
	)
	BeforeEach(func() {
		org = newOrg("apikeys")
		owner = newPerson(org, "owner", "podium-org-owner")
	})

	It("are shown once and stored only as a hash, in a labelled Secret of the operator's namespace", func() {
		code, out := call(http.MethodPost, "/v1/api-keys", owner.Token, map[string]any{"name": "harbor laptop", "expires_in_days": 30})
		Expect(code).To(Equal(http.StatusCreated), string(out))
		Expect(keysOf(out)).To(Equal([]string{"created_at", "expires_at", "id", "key", "last_used_at", "name", "user"}))
		k := decode[created](out)
		Expect(k.Key).To(HavePrefix("pdm_" + k.ID + "_"))
		Expect(k.User).To(Equal(owner.User))
		Expect(k.ExpiresAt).NotTo(BeNil())

		sec := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: testenv.DeliveryNamespace, Name: "podium-api-key-" + k.ID}, sec)).To(Succeed())
		Expect(sec.Labels).To(HaveKeyWithValue("app.kubernetes.io/component", "api-key"))
		sum := sha256.Sum256([]byte(k.Key))
		Expect(sec.Data["sha256"]).To(Equal(sum[:]))
		secret := k.Key[len("pdm_"+k.ID+"_"):]
		for name, v := range sec.Data {
			Expect(bytes.Contains(v, []byte(secret))).To(BeFalse(), "data %s holds the key", name)
		}
		for name, v := range sec.Annotations {
			Expect(v).NotTo(ContainSubstring(secret), "annotation %s holds the key", name)
		}

		code, out = call(http.MethodGet, "/v1/api-keys", owner.Token, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(ContainSubstring(k.ID))
		Expect(string(out)).NotTo(ContainSubstring(secret))

		By("another user sees none of them and cannot revoke them")
		other := newPerson(org, "other", "podium-org-member")
		code, out = call(http.MethodGet, "/v1/api-keys", other.Token, nil)
		Expect(code).To(Equal(http.StatusOK))
		Expect(string(out)).To(MatchJSON(`{"api_keys": []}`))
		code, out = call(http.MethodDelete, "/v1/api-keys", other.Token, map[string]any{"id": k.ID})
		Expect(code).To(Equal(http.StatusOK))
		Expect(string(out)).To(MatchJSON(`{"affected": 0}`))
		Expect(secretStore(owner, k.Key, "STILL_WORKS")).To(Equal(http.StatusCreated))

		By("an API key cannot make keys (it would outlive its own revocation)")
		code, _ = call(http.MethodPost, "/v1/api-keys", k.Key, map[string]any{})
		Expect(code).To(Equal(http.StatusForbidden))
		code, _ = call(http.MethodPost, "/v1/api-keys", "", map[string]any{})
		Expect(code).To(Equal(http.StatusUnauthorized))
		code, out = call(http.MethodPost, "/v1/api-keys", owner.Token, map[string]any{"expires_in_days": 0})
		Expect(code).To(Equal(http.StatusUnprocessableEntity))
		Expect(string(out)).To(ContainSubstring("expires_in_days"))
	})

	It("sign in as their creator, whose RBAC decides every request, until revoked", func() {
		k := createKey(owner, map[string]any{})
		Expect(secretStore(owner, k.Key, "VIA_KEY")).To(Equal(http.StatusCreated))
		code, out := call(http.MethodGet, "/v1/secrets?org="+org, k.Key, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(ContainSubstring("VIA_KEY"))

		By("removing the creator's rights takes effect within seconds")
		Expect(k8sClient.Delete(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "owner-podium-org-owner"}})).To(Succeed())
		Eventually(func() int { return secretStore(owner, k.Key, "NO_RIGHTS") }).Should(Equal(http.StatusForbidden))

		By("revoking the key: refused within seconds")
		code, out = call(http.MethodDelete, "/v1/api-keys", owner.Token, map[string]any{"id": k.ID})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(MatchJSON(`{"affected": 1}`))
		Eventually(func() int { c, _ := call(http.MethodGet, "/v1/api-keys", k.Key, nil); return c }).Should(Equal(http.StatusUnauthorized))
	})

	It("are refused once expired, and once their ServiceAccount is gone", func() {
		k := createKey(owner, map[string]any{"expires_in_days": 1})
		Expect(secretStore(owner, k.Key, "BEFORE_EXPIRY")).To(Equal(http.StatusCreated))
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testenv.DeliveryNamespace, Name: "podium-api-key-" + k.ID}}
		Expect(testenv.Update(ctx, k8sClient, sec, func(s *corev1.Secret) {
			s.Annotations["hub.podium.dev/api-key-expires-at"] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
		})).To(Succeed())
		Eventually(func() int { c, _ := call(http.MethodGet, "/v1/api-keys", k.Key, nil); return c }).Should(Equal(http.StatusUnauthorized))

		k2 := createKey(owner, map[string]any{})
		Expect(secretStore(owner, k2.Key, "BEFORE_DELETE")).To(Equal(http.StatusCreated))
		Expect(k8sClient.Delete(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: owner.Name}})).To(Succeed())
		Eventually(func() int { c, _ := call(http.MethodGet, "/v1/api-keys", k2.Key, nil); return c }).Should(Equal(http.StatusUnauthorized))

		By("a ServiceAccount made again under the same name is another identity")
		Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: owner.Name}})).To(Succeed())
		Consistently(func() int { c, _ := call(http.MethodGet, "/v1/api-keys", k2.Key, nil); return c }, 3*time.Second).Should(Equal(http.StatusUnauthorized))
	})

	It("answer a wrong key like an unknown one, and look nothing up for a malformed one", func() {
		k := createKey(owner, map[string]any{})
		wrong := k.Key[:len(k.Key)-4] + strings.Repeat("A", 4)
		if wrong == k.Key {
			wrong = k.Key[:len(k.Key)-4] + "BBBB"
		}
		for _, token := range []string{wrong, "pdm_0000000000000000_x", "pdm_", "pdm_zz", "pdmat_x.y", "pdmat_" + k.ID} {
			code, out := call(http.MethodGet, "/v1/api-keys", token, nil)
			Expect(code).To(Equal(http.StatusUnauthorized), token+": "+string(out))
			Expect(string(out)).NotTo(ContainSubstring(k.Key[len(k.Key)-10:]))
		}
	})
})

var _ = Describe("API keys and their creator's credential", func() {
	var (
		org   string
		owner person
	)
	BeforeEach(func() {
		org = newOrg("apikeybound")
		owner = newPerson(org, "owner", "podium-org-owner")
	})

	It("cannot be made with a Pod-bound token, and a key recorded from one does not sign in", func() {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "holder"},
			Spec: corev1.PodSpec{
				ServiceAccountName:           owner.Name,
				AutomountServiceAccountToken: ptr.To(false),
				Containers:                   []corev1.Container{{Name: "c", Image: "busybox"}},
			},
		}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		tr, err := clientset.CoreV1().ServiceAccounts(org).CreateToken(ctx, owner.Name, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{
				Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID,
			}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		podToken := tr.Status.Token

		By("the Pod's token signs in, but makes no key")
		code, out := call(http.MethodGet, "/v1/api-keys", podToken, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		code, out = call(http.MethodPost, "/v1/api-keys", podToken, map[string]any{"name": "from a pod"})
		Expect(code).To(Equal(http.StatusForbidden), string(out))
		Expect(string(out)).To(ContainSubstring("bound to a Pod"))
		code, out = call(http.MethodGet, "/v1/api-keys", owner.Token, nil)
		Expect(code).To(Equal(http.StatusOK))
		Expect(string(out)).To(MatchJSON(`{"api_keys": []}`))

		By("a key whose recorded identity is bound to a Pod (made before this rule) does not sign in")
		k := createKey(owner, map[string]any{})
		Expect(secretStore(owner, k.Key, "UNBOUND")).To(Equal(http.StatusCreated))
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testenv.DeliveryNamespace, Name: "podium-api-key-" + k.ID}}
		Expect(testenv.Update(ctx, k8sClient, sec, func(s *corev1.Secret) {
			var ident map[string]any
			Expect(json.Unmarshal(s.Data["identity"], &ident)).To(Succeed())
			ident["extra"] = map[string][]string{
				"authentication.kubernetes.io/pod-name": {pod.Name},
				"authentication.kubernetes.io/pod-uid":  {string(pod.UID)},
			}
			b, err := json.Marshal(ident)
			Expect(err).NotTo(HaveOccurred())
			s.Data["identity"] = b
		})).To(Succeed())
		Eventually(func() int { c, _ := call(http.MethodGet, "/v1/api-keys", k.Key, nil); return c }).Should(Equal(http.StatusUnauthorized))
		code, _ = call(http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": k.Key})
		Expect(code).To(Equal(http.StatusUnauthorized))
	})

	It("refuse names with bidirectional controls, and the list refuses unknown query parameters", func() {
		for _, name := range []string{"evil\u202egnp.exe", "a\u2066b", "\u202ax", "x\u2069", "a\u200fb"} {
			code, out := call(http.MethodPost, "/v1/api-keys", owner.Token, map[string]any{"name": name})
			Expect(code).To(Equal(http.StatusUnprocessableEntity), "%q: %s", name, out)
			Expect(string(out)).To(ContainSubstring(`"field":"name"`))
		}
		code, out := call(http.MethodGet, "/v1/api-keys?org="+org, owner.Token, nil)
		Expect(code).To(Equal(http.StatusBadRequest), string(out))
		Expect(string(out)).To(ContainSubstring("org"))
		Expect(string(out)).To(ContainSubstring("unknown query parameter"))
		code, out = call(http.MethodGet, "/v1/api-keys?", owner.Token, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		code, out = call(http.MethodPost, "/v1/api-keys", owner.Token, map[string]any{"name": "harbor · laptop"})
		Expect(code).To(Equal(http.StatusCreated), string(out))
	})
})
