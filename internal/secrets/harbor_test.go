package secrets_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Harbor's hosted client (docs/http-api.md, "Harbor compatibility") speaks to /v1/registry-credentials
// with these shapes; the tests replay them and compare the answers key by key.

// saKey is a Google service-account key file, as `gcloud iam service-accounts keys
// create` writes it (indented, newlines); the canary is in its private key.
const saKey = `{
  "type": "service_account",
  "project_id": "podium-test",
  "private_key_id": "0123456789abcdef",
  "private_key": "-----BEGIN PRIVATE KEY-----\nsa-canary-harbor-31\n-----END PRIVATE KEY-----\n",
  "client_email": "puller@podium-test.iam.gserviceaccount.com",
  "client_id": "1234567890"
}
`

// keysOf returns the sorted keys of a JSON object.
func keysOf(raw []byte) []string {
	GinkgoHelper()
	var m map[string]json.RawMessage
	Expect(json.Unmarshal(raw, &m)).To(Succeed(), string(raw))
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// harborRecordKeys are the keys of a registry credential record: Harbor's eight and
// Podium's three.
var harborRecordKeys = []string{"created_at", "display_name", "fingerprint", "id", "last_used_at", "org_id", "provider", "registry_host", "status", "usable", "username", "value_last4"}

var _ = Describe("Harbor's registry-credential shape", func() {
	var (
		acme          org
		owner, member person
	)
	BeforeEach(func() {
		acme = newOrg("harbor-reg")
		owner = newPerson(acme, "owner", "podium-org-owner")
		member = newPerson(acme, "member", "podium-org-member")
	})

	It("adds a GAR service-account key, confirms a replacement with supersede_credential_id, lists under credentials and deletes by credential_id", func() {
		add := map[string]any{"registry_host": "us-docker.pkg.dev", "display_name": "GAR puller", "service_account_json": saKey}
		code, body := call(http.MethodPost, "/v1/registry-credentials", member.Token, add)
		Expect(code).To(Equal(http.StatusCreated), string(body))
		Expect(keysOf(body)).To(Equal(harborRecordKeys))
		var first struct {
			ID, Provider, Fingerprint, Status, Username string
			Host                                        string  `json:"registry_host"`
			Display                                     string  `json:"display_name"`
			Last4                                       string  `json:"value_last4"`
			LastUsed                                    *string `json:"last_used_at"`
		}
		Expect(json.Unmarshal(body, &first)).To(Succeed())
		Expect(first.Provider).To(Equal("gar"))
		Expect(first.Host).To(Equal("us-docker.pkg.dev"))
		Expect(first.Display).To(Equal("GAR puller"))
		Expect(first.Username).To(Equal("_json_key"))
		Expect(first.Status).To(Equal("active"))
		Expect(first.Last4).To(BeEmpty(), "the end of a JSON key tells nobody anything")
		Expect(first.LastUsed).To(BeNil())
		Expect(first.Fingerprint).To(MatchRegexp(`^hmac-sha256:[0-9a-f]{16}$`))
		Expect(string(body)).NotTo(ContainSubstring("sa-canary"))

		By("the run's imagePullSecret signs in as _json_key with the key's JSON, as GAR expects")
		hs := hostedSecret(acme, first.ID)
		sec := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: valueNamespace, Name: hs.Spec.SecretRef.Name}, sec)).To(Succeed())
		Expect(sec.Type).To(Equal(corev1.SecretTypeDockerConfigJson))
		var dc struct {
			Auths map[string]struct{ Username, Password, Auth string }
		}
		Expect(json.Unmarshal(sec.Data[corev1.DockerConfigJsonKey], &dc)).To(Succeed())
		entry := dc.Auths["us-docker.pkg.dev"]
		Expect(entry.Username).To(Equal("_json_key"))
		var sent, stored map[string]any
		Expect(json.Unmarshal([]byte(saKey), &sent)).To(Succeed())
		Expect(json.Unmarshal([]byte(entry.Password), &stored)).To(Succeed(), "the password is the key's JSON")
		Expect(stored).To(Equal(sent))
		Expect(entry.Auth).To(Equal(base64.StdEncoding.EncodeToString([]byte("_json_key:" + entry.Password))))

		By("the key as a JSON object (the file's text itself) is the same credential: the same fingerprint")
		code, body = call(http.MethodPost, "/v1/registry-credentials", member.Token, map[string]any{"registry_host": "europe-docker.pkg.dev", "display_name": "GAR eu", "service_account_json": json.RawMessage(saKey)})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		Expect(decode[struct{ Fingerprint string }](body).Fingerprint).To(Equal(first.Fingerprint))

		By("a second add of the display name is 409 replacement_required naming the existing credential")
		code, body = call(http.MethodPost, "/v1/registry-credentials", owner.Token, add)
		Expect(code).To(Equal(http.StatusConflict), string(body))
		var conflict struct {
			Error struct {
				Code     string          `json:"code"`
				Message  string          `json:"message"`
				Existing json.RawMessage `json:"existing"`
			} `json:"error"`
		}
		Expect(json.Unmarshal(body, &conflict)).To(Succeed())
		Expect(conflict.Error.Code).To(Equal("replacement_required"))
		Expect(keysOf(conflict.Error.Existing)).To(Equal([]string{"created_at", "display_name", "fingerprint", "id", "provider", "registry_host", "value_last4"}))
		existingID := decode[struct{ ID string }](conflict.Error.Existing).ID
		Expect(existingID).To(Equal(first.ID))

		By("the same request with supersede_credential_id = existing.id confirms it (organization owner rights)")
		confirm := map[string]any{"supersede_credential_id": existingID}
		for k, v := range add {
			confirm[k] = v
		}
		code, _ = call(http.MethodPost, "/v1/registry-credentials", member.Token, confirm)
		Expect(code).To(Equal(http.StatusForbidden))
		code, body = call(http.MethodPost, "/v1/registry-credentials", owner.Token, confirm)
		Expect(code).To(Equal(http.StatusCreated), string(body))
		second := decode[struct{ ID string }](body).ID
		Expect(second).NotTo(Equal(first.ID))
		code, body = call(http.MethodPost, "/v1/registry-credentials", owner.Token, confirm)
		Expect(code).To(Equal(http.StatusConflict))
		Expect(decode[apiError](body).Error.Code).To(Equal("replacement_stale"))

		By("GET lists under credentials")
		code, body = call(http.MethodGet, "/v1/registry-credentials", member.Token, nil)
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(keysOf(body)).To(Equal([]string{"credentials"}))
		list := decode[struct{ Credentials []json.RawMessage }](body).Credentials
		Expect(list).To(HaveLen(2))
		for _, rec := range list {
			Expect(keysOf(rec)).To(Equal(harborRecordKeys))
		}

		By("DELETE {credential_id, purge: false} revokes that credential")
		code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"credential_id": second, "purge": false})
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(string(body)).To(MatchJSON(`{"credential_id": "`+second+`", "affected": 1, "purged": false}`), "Harbor's hub answers credential_id, affected and purged")
		Expect(listRegistry(member, "")).To(ConsistOf(HaveField("DisplayName", "GAR eu")))
		code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"credential_id": second})
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(string(body)).To(MatchJSON(`{"credential_id": "`+second+`", "affected": 0, "purged": false}`), "revoking a revoked credential changes nothing")

		By("DELETE {credential_id, purge: true} deletes that record only")
		code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"credential_id": first.ID, "purge": true})
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(string(body)).To(MatchJSON(`{"credential_id": "` + first.ID + `", "affected": 1, "purged": true}`))
		Expect(listRegistry(member, "?status=all")).To(ConsistOf(HaveField("ID", second), HaveField("DisplayName", "GAR eu")))

		By("an id the organization has no credential of affects nothing, as Harbor's hub answers (its CLI prints that nothing matched)")
		for _, purge := range []bool{true, false} {
			unknown := uuid.NewString()
			code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"credential_id": unknown, "purge": purge})
			Expect(code).To(Equal(http.StatusOK), string(body))
			Expect(string(body)).To(MatchJSON(fmt.Sprintf(`{"credential_id": %q, "affected": 0, "purged": %t}`, unknown, purge)))
		}
	})

	It("refuses what is not a service-account key, naming the field and never quoting it", func() {
		for _, tc := range []struct {
			body  map[string]any
			code  int
			field string
		}{
			{map[string]any{"registry_host": "us-docker.pkg.dev", "display_name": "x", "service_account_json": `{"type": "authorized_user", "private_key": "sa-canary-bad-1"}`}, http.StatusUnprocessableEntity, "service_account_json"},
			{map[string]any{"registry_host": "us-docker.pkg.dev", "display_name": "x", "service_account_json": "sa-canary-bad-2 not json"}, http.StatusUnprocessableEntity, "service_account_json"},
			{map[string]any{"registry_host": "us-docker.pkg.dev", "display_name": "x", "service_account_json": 42}, http.StatusUnprocessableEntity, "service_account_json"},
			{map[string]any{"registry_host": "us-docker.pkg.dev", "display_name": "x", "service_account_json": saKey, "username": "u", "password": "sa-canary-bad-3"}, http.StatusBadRequest, "service_account_json"},
			{map[string]any{"registry_host": "us-docker.pkg.dev", "display_name": "x"}, http.StatusBadRequest, "service_account_json"},
			{map[string]any{"registry_host": "us-docker.pkg.dev", "display_name": "x", "username": "_json_key", "password": "sa-canary-bad-4"}, http.StatusUnprocessableEntity, "username"},
			{map[string]any{"display_name": "x", "service_account_json": saKey}, http.StatusBadRequest, "registry_host"},
		} {
			code, body := call(http.MethodPost, "/v1/registry-credentials", member.Token, tc.body)
			Expect(code).To(Equal(tc.code), string(body))
			Expect(string(body)).To(ContainSubstring(tc.field))
			Expect(string(body)).NotTo(ContainSubstring("sa-canary"))
		}
		code, body := call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"credential_id": "not-a-uuid"})
		Expect(code).To(Equal(http.StatusUnprocessableEntity), string(body))
		Expect(string(body)).To(ContainSubstring("credential_id"))
		code, body = call(http.MethodDelete, "/v1/registry-credentials", owner.Token, map[string]any{"credential_id": uuid.NewString(), "display_name": "x"})
		Expect(code).To(Equal(http.StatusBadRequest), string(body))
	})
})
