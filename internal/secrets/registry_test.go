package secrets_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secrets"
	"podium.dev/podium/internal/testenv"
)

// registryRecord is a registry credential as the API returns it.
type registryRecord struct {
	ID          string  `json:"id"`
	OrgID       string  `json:"org_id"`
	DisplayName string  `json:"display_name"`
	Server      string  `json:"registry_host"`
	Provider    string  `json:"provider"`
	Username    string  `json:"username"`
	Fingerprint string  `json:"fingerprint"`
	ValueLast4  string  `json:"value_last4"`
	Status      string  `json:"status"`
	CreatedAt   string  `json:"created_at"`
	LastUsedAt  *string `json:"last_used_at"`
}

func storeRegistryAt(base string, p person, fields map[string]any) (int, []byte) {
	return callAt(base, http.MethodPost, "/v1/registry-credentials", p.Token, fields)
}

func storeRegistry(p person, fields map[string]any) (int, []byte) {
	return call(http.MethodPost, "/v1/registry-credentials", p.Token, fields)
}

func listRegistry(p person, query string) []registryRecord {
	code, body := call(http.MethodGet, "/v1/registry-credentials"+query, p.Token, nil)
	ExpectWithOffset(1, code).To(Equal(http.StatusOK), string(body))
	return decode[struct {
		Credentials []registryRecord `json:"credentials"`
	}](body).Credentials
}

func cred(name, password string) map[string]any {
	return map[string]any{"display_name": name, "registry_host": "ghcr.io", "username": "podium-bot", "password": password}
}

var _ = Describe("/v1/registry-credentials", func() {
	var (
		acme          org
		owner, member person
	)
	BeforeEach(func() {
		acme = newOrg("registry")
		owner = newPerson(acme, "owner", "podium-org-owner")
		member = newPerson(acme, "member", "podium-org-member")
	})

	It("stores a dockerconfigjson, refuses a second one, and replaces it on confirmation", func() {
		code, body := storeRegistry(member, cred("GHCR bot", "ghp_first-token-0001"))
		Expect(code).To(Equal(http.StatusCreated), string(body))
		first := decode[registryRecord](body)
		Expect(first).To(And(
			HaveField("OrgID", acme.UID), HaveField("DisplayName", "GHCR bot"), HaveField("Server", "ghcr.io"), HaveField("Provider", "basic"),
			HaveField("Username", "podium-bot"), HaveField("ValueLast4", "0001"), HaveField("Status", "active"),
			HaveField("Fingerprint", MatchRegexp(`^hmac-sha256:[0-9a-f]{16}$`)),
		))
		Expect(string(body)).NotTo(ContainSubstring("ghp_first"))

		By("the value Secret is a kubernetes.io/dockerconfigjson the kubelet can read")
		hs := hostedSecret(acme, first.ID)
		Expect(hs.Spec.Type).To(Equal(hubv1alpha1.TypeRegistry))
		Expect(hs.Spec.Scope).To(Equal(hubv1alpha1.ScopeOrg))
		sec := &corev1.Secret{}
		Expect(hs.Spec.SecretRef.Namespace).To(Equal(valueNamespace), "a registry value lives where every value stored over HTTP lives")
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: valueNamespace, Name: hs.Spec.SecretRef.Name}, sec)).To(Succeed())
		Expect(sec.Type).To(Equal(corev1.SecretTypeDockerConfigJson))
		var dc struct {
			Auths map[string]struct{ Username, Password, Auth string }
		}
		Expect(json.Unmarshal(sec.Data[corev1.DockerConfigJsonKey], &dc)).To(Succeed())
		Expect(dc.Auths).To(HaveKey("ghcr.io"))
		Expect(dc.Auths["ghcr.io"].Password).To(Equal("ghp_first-token-0001"))
		Expect(dc.Auths["ghcr.io"].Auth).To(Equal(base64.StdEncoding.EncodeToString([]byte("podium-bot:ghp_first-token-0001"))))

		By("the same value in another credential has the same fingerprint; another value another")
		code, body = storeRegistry(member, cred("GHCR mirror", "ghp_first-token-0001"))
		Expect(code).To(Equal(http.StatusCreated), string(body))
		Expect(decode[registryRecord](body).Fingerprint).To(Equal(first.Fingerprint))

		By("a second store under the same display name is refused with the existing credential")
		code, body = storeRegistry(member, cred("GHCR bot", "ghp_second-token-0002"))
		Expect(code).To(Equal(http.StatusConflict), string(body))
		e := decode[struct {
			Error struct {
				Code     string
				Existing registryRecord
			}
		}](body).Error
		Expect(e.Code).To(Equal("replacement_required"))
		Expect(e.Existing).To(And(HaveField("ID", first.ID), HaveField("Fingerprint", first.Fingerprint), HaveField("ValueLast4", "0001"), HaveField("DisplayName", "GHCR bot")))

		By("a member may not supersede; an org owner may")
		withID := cred("GHCR bot", "ghp_second-token-0002")
		withID["supersede_credential_id"] = first.ID
		code, _ = storeRegistry(member, withID)
		Expect(code).To(Equal(http.StatusForbidden))
		code, body = storeRegistry(owner, withID)
		Expect(code).To(Equal(http.StatusCreated), string(body))
		second := decode[registryRecord](body)
		Expect(second.Fingerprint).NotTo(Equal(first.Fingerprint))

		By("the old id is stale now")
		code, body = storeRegistry(owner, withID)
		Expect(code).To(Equal(http.StatusConflict))
		Expect(string(body)).To(ContainSubstring("replacement_stale"))

		all := listRegistry(member, "?status=all")
		Expect(all).To(HaveLen(3))
		Expect(listRegistry(member, "")).To(ConsistOf(HaveField("ID", second.ID), HaveField("DisplayName", "GHCR mirror")))
		Expect(list(owner, "?status=all")).To(BeEmpty(), "/v1/secrets never lists registry credentials")

		By("revoke, then purge")
		code, body = call(http.MethodDelete, "/v1/registry-credentials", member.Token, map[string]any{"display_name": "GHCR bot"})
		Expect(code).To(Equal(http.StatusForbidden), "the member did not store the active one: "+string(body))
		code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"display_name": "GHCR bot"})
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(string(body)).To(MatchJSON(`{"affected":1,"purged":false}`), "by display name: no credential_id")
		Expect(listRegistry(member, "")).To(ConsistOf(HaveField("DisplayName", "GHCR mirror")))
		code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"display_name": "GHCR bot", "purge": true})
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(string(body)).To(MatchJSON(`{"affected":2,"purged":true}`))
		Expect(listRegistry(member, "?status=all")).To(ConsistOf(HaveField("DisplayName", "GHCR mirror")))
		Eventually(func() []corev1.Secret {
			var out []corev1.Secret
			for _, s := range storedValues(acme) {
				if s.Type == corev1.SecretTypeDockerConfigJson {
					out = append(out, s)
				}
			}
			return out
		}).Should(HaveLen(1), "only the mirror's value Secret remains")
	})

	It("answers bad input with a 4xx naming the field, never echoing the password", func() {
		for _, c := range []struct {
			body  string
			code  int
			field string
		}{
			{`{"registry_host":"ghcr.io","username":"u","password":"pw-canary-xyz"}`, 400, "display_name"},
			{`{"display_name":"a","username":"u","password":"pw-canary-xyz"}`, 400, "registry_host"},
			{`{"display_name":"a","registry_host":"ghcr.io","password":"pw-canary-xyz"}`, 400, "username"},
			{`{"display_name":"a","registry_host":"ghcr.io","username":"u"}`, 400, "password"},
			{`{"display_name":"a","registry_host":"ghcr.io","username":"u","password":"pw-canary-xyz","extra":1}`, 400, "extra"},
			{`{"display_name":"a,b","registry_host":"ghcr.io","username":"u","password":"pw-canary-xyz"}`, 422, "display_name"},
			{`{"display_name":"a","registry_host":"GHCR.io","username":"u","password":"pw-canary-xyz"}`, 422, "registry_host"},
			{`{"display_name":"a","registry_host":"https://ghcr.io","username":"u","password":"pw-canary-xyz"}`, 422, "registry_host"},
			{`{"display_name":"a","registry_host":"ghcr.io:70000","username":"u","password":"pw-canary-xyz"}`, 422, "registry_host"},
			{`{"display_name":"a","registry_host":"ghcr.io","username":"a:b","password":"pw-canary-xyz"}`, 422, "username"},
			{`{"display_name":"a","registry_host":"ghcr.io","username":"u","password":""}`, 422, "password"},
			{`{"display_name":"a","registry_host":"ghcr.io","username":"u","password":"pw-canary-xyz","supersede_credential_id":"x"}`, 422, "supersede_credential_id"},
		} {
			code, body := call(http.MethodPost, "/v1/registry-credentials", member.Token, c.body)
			Expect(code).To(Equal(c.code), c.body+" -> "+string(body))
			Expect(string(body)).To(ContainSubstring(c.field), c.body)
			Expect(string(body)).NotTo(ContainSubstring("canary"))
		}
		code, body := call(http.MethodGet, "/v1/registry-credentials?scope=user", member.Token, nil)
		Expect(code).To(Equal(http.StatusBadRequest), string(body))
		Expect(string(body)).To(ContainSubstring("scope"))
		code, _ = call(http.MethodGet, "/v1/registry-credentials", "", nil)
		Expect(code).To(Equal(http.StatusUnauthorized))
		code, body = call(http.MethodDelete, "/v1/registry-credentials", member.Token, map[string]any{})
		Expect(code).To(Equal(http.StatusBadRequest))
		Expect(string(body)).To(ContainSubstring("credential_id"))
	})

	It("cannot be created with kubectl: only the operator stores registry credentials", func() {
		// An org owner (every right on hostedsecrets but store-registry) tries to plant
		// a registry credential around the seat limit and the fingerprint.
		c := kubectlAs(owner)
		hs := &hubv1alpha1.HostedSecret{
			ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "planted"},
			Spec: hubv1alpha1.HostedSecretSpec{
				Type: hubv1alpha1.TypeRegistry, Scope: hubv1alpha1.ScopeOrg,
				Registry:  &hubv1alpha1.RegistrySpec{Server: "ghcr.io", Username: "u", DisplayName: "planted"},
				SecretRef: hubv1alpha1.SecretValueRef{Name: "planted"},
			},
		}
		byPolicy(c.Create(ctx, hs), "spec.type")

		By("the CRD refuses a registry credential without scope org, or with an envVar")
		bad := hs.DeepCopy()
		bad.Spec.Scope = hubv1alpha1.ScopeUser
		bad.Spec.Owner = owner.User
		Expect(k8sClient.Create(ctx, bad)).To(MatchError(ContainSubstring("scope is org exactly when type is registry")))
		bad = hs.DeepCopy()
		bad.Spec.EnvVar = "X"
		Expect(k8sClient.Create(ctx, bad)).To(MatchError(ContainSubstring("envVar is required when type is env")))
		bad = hs.DeepCopy()
		bad.Spec.Registry.Username = "a b"
		Expect(k8sClient.Create(ctx, bad)).To(MatchError(ContainSubstring("username must not contain")))
	})
})

var _ = Describe("The registry fields", func() {
	It("are judged alike by the CRD and by the HTTP API's checks", func() {
		acme := newOrg("registry-fields")
		cases := []struct {
			field, value string
			check        func(string) string
		}{
			{"server", "ghcr.io", hubv1alpha1.CheckServer}, {"server", "registry.example.com:5000", hubv1alpha1.CheckServer},
			{"server", "GHCR.io", hubv1alpha1.CheckServer}, {"server", "https://ghcr.io", hubv1alpha1.CheckServer},
			{"server", "ghcr.io/x", hubv1alpha1.CheckServer}, {"server", "a..b", hubv1alpha1.CheckServer},
			{"username", "me@example.com", hubv1alpha1.CheckUsername}, {"username", "a:b", hubv1alpha1.CheckUsername},
			{"username", "a b", hubv1alpha1.CheckUsername}, {"username", "a\u202eb", hubv1alpha1.CheckUsername},
			{"username", "a\tb", hubv1alpha1.CheckUsername},
			{"displayName", "GHCR bot", hubv1alpha1.CheckDisplayName}, {"displayName", "a,b", hubv1alpha1.CheckDisplayName},
			{"displayName", " a", hubv1alpha1.CheckDisplayName}, {"displayName", "x_y.z-1", hubv1alpha1.CheckDisplayName},
		}
		for _, c := range cases {
			reg := &hubv1alpha1.RegistrySpec{Server: "ghcr.io", Username: "u", DisplayName: "d"}
			switch c.field {
			case "server":
				reg.Server = c.value
			case "username":
				reg.Username = c.value
			default:
				reg.DisplayName = c.value
			}
			hs := &hubv1alpha1.HostedSecret{
				ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, GenerateName: "fields-"},
				Spec: hubv1alpha1.HostedSecretSpec{Type: hubv1alpha1.TypeRegistry, Scope: hubv1alpha1.ScopeOrg, Registry: reg,
					SecretRef: hubv1alpha1.SecretValueRef{Name: "fields"}},
			}
			err := k8sClient.Create(ctx, hs, client.DryRunAll)
			Expect(err == nil).To(Equal(c.check(c.value) == ""), "%s %q: CRD says %v, the API says %q", c.field, c.value, err, c.check(c.value))
		}
	})
})

var _ = Describe("The registry credential limit", func() {
	It("lets exactly 20 of 26 concurrent adds through, across two operator replicas", func() {
		acme := newOrg("limit")
		member := newPerson(acme, "member", "podium-org-member")
		owner := newPerson(acme, "owner", "podium-org-owner")

		// A second operator replica: the built binary in its own process (caches, HTTP
		// server, controllers), sharing nothing with the first but the apiserver.
		rctx, rcancel := context.WithCancel(ctx)
		other, err := testenv.StartOperatorProcess(rctx, testEnv, cfg, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { rcancel(); <-other.Done })

		codes := race(26, func(i int) (int, []byte) {
			base := baseURL
			if i%2 == 1 {
				base = other.BaseURL
			}
			return storeRegistryAt(base, member, cred(fmt.Sprintf("registry %02d", i), fmt.Sprintf("token-number-%02d", i)))
		})
		Expect(codes[http.StatusCreated]).To(HaveLen(20), "%v", codes)
		Expect(codes[http.StatusConflict]).To(HaveLen(6))
		for _, b := range codes[http.StatusConflict] {
			Expect(string(b)).To(ContainSubstring(`"limit_reached"`))
		}
		Expect(listRegistry(member, "")).To(HaveLen(20))

		By("every seat names one of the 20, and the losers left nothing behind")
		var leases coordinationv1.LeaseList
		Expect(k8sClient.List(ctx, &leases, client.InNamespace(acme.Name), client.HasLabels{hubv1alpha1.LabelRegistrySeat})).To(Succeed())
		Expect(leases.Items).To(HaveLen(secrets.MaxRegistryCredentials))
		Eventually(func() int { return len(hostedSecrets(acme)) }).Should(Equal(20))

		By("at the limit a supersede still works, a new name does not")
		active := listRegistry(member, "")
		sup := cred(active[0].DisplayName, "replacement-token-0099")
		sup["supersede_credential_id"] = active[0].ID
		code, body := storeRegistry(owner, sup)
		Expect(code).To(Equal(http.StatusCreated), string(body))
		code, body = storeRegistry(member, cred("one too many", "token-too-many"))
		Expect(code).To(Equal(http.StatusConflict))
		Expect(string(body)).To(ContainSubstring("limit_reached"))

		By("a revoke frees a seat for the next one")
		code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"display_name": active[1].DisplayName})
		Expect(code).To(Equal(http.StatusOK), string(body))
		code, body = storeRegistry(member, cred("one too many", "token-too-many"))
		Expect(code).To(Equal(http.StatusCreated), string(body))
		Expect(listRegistry(member, "")).To(HaveLen(20))
		code, _ = storeRegistry(member, cred("still too many", "token-too-many"))
		Expect(code).To(Equal(http.StatusConflict))
		Expect(strings.Count(fmt.Sprint(listRegistry(member, "?status=all")), "revoked")).To(Equal(2))
	})
})
