package secrets_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secrets"
	"podium.dev/podium/internal/testenv"
)

const jobA = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"

// hostedSecrets lists the org's HostedSecrets straight from the apiserver.
func hostedSecrets(o org) []hubv1alpha1.HostedSecret {
	l := &hubv1alpha1.HostedSecretList{}
	ExpectWithOffset(1, k8sClient.List(ctx, l, client.InNamespace(o.Name))).To(Succeed())
	return l.Items
}

func hostedSecret(o org, id string) *hubv1alpha1.HostedSecret {
	for _, hs := range hostedSecrets(o) {
		if string(hs.UID) == id {
			return &hs
		}
	}
	return nil
}

// valueSecrets lists the value Secrets of the org's hosted secrets: in the org namespace
// (declarative ones) and in the operator's value namespace (stored over HTTP).
func valueSecrets(o org) []corev1.Secret {
	l := &corev1.SecretList{}
	ExpectWithOffset(1, k8sClient.List(ctx, l, client.InNamespace(o.Name), client.HasLabels{hubv1alpha1.LabelHostedSecret})).To(Succeed())
	return append(l.Items, storedValues(o)...)
}

// storedValues lists the value Secrets the operator keeps for the org in its value
// namespace.
func storedValues(o org) []corev1.Secret {
	l := &corev1.SecretList{}
	ExpectWithOffset(1, k8sClient.List(ctx, l, client.InNamespace(valueNamespace), client.MatchingLabels{hubv1alpha1.LabelOrg: o.Name})).To(Succeed())
	return l.Items
}

// valueNamespace is the test operator's value namespace.
const valueNamespace = testenv.DeliveryNamespace

func activeIn(o org, envVar string) []string {
	var ids []string
	for _, hs := range hostedSecrets(o) {
		if hs.Spec.EnvVar == envVar && hs.Status.State == hubv1alpha1.StateActive {
			ids = append(ids, string(hs.UID))
		}
	}
	return ids
}

var _ = Describe("POST /v1/secrets", func() {
	var (
		acme          org
		owner, member person
	)
	BeforeEach(func() {
		acme = newOrg("acme")
		owner = newPerson(acme, "owner", "podium-org-owner")
		member = newPerson(acme, "member", "podium-org-member")
	})

	It("stores, refuses a second active secret, and replaces it on confirmation", func() {
		code, body := store(owner, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-first-0001", "provider": "anthropic"})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		first := decode[record](body)
		Expect(first.ID).NotTo(BeEmpty())
		Expect(first).To(And(
			HaveField("Scope", "user"), HaveField("JobID", BeNil()), HaveField("OrgID", acme.UID),
			HaveField("EnvVar", "ANTHROPIC_API_KEY"), HaveField("Provider", HaveValue(Equal("anthropic"))),
			HaveField("ValueLast4", "0001"), HaveField("Status", "active"), HaveField("CreatedAt", Not(BeEmpty())),
		))
		Expect(string(body)).NotTo(ContainSubstring("sk-ant-first"))

		By("a second store without confirmation is refused with the existing secret")
		code, body = store(owner, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-second-0002"})
		Expect(code).To(Equal(http.StatusConflict), string(body))
		e := decode[apiError](body)
		Expect(e.Error.Code).To(Equal("replacement_required"))
		Expect(e.Error.Existing).NotTo(BeNil())
		Expect(*e.Error.Existing).To(And(HaveField("ID", first.ID), HaveField("Scope", "user"), HaveField("EnvVar", "ANTHROPIC_API_KEY"),
			HaveField("ValueLast4", "0001"), HaveField("CreatedAt", first.CreatedAt)))

		By("a member may not supersede")
		code, body = store(member, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-second-0002", "supersede_credential_id": first.ID})
		Expect(code).To(Equal(http.StatusForbidden), string(body))
		Expect(decode[apiError](body).Error.Code).To(Equal("forbidden"))

		By("the owner confirms with the existing id")
		code, body = store(owner, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-second-0002", "supersede_credential_id": first.ID})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		second := decode[record](body)
		Expect(second.ID).NotTo(Equal(first.ID))
		Expect(second.ValueLast4).To(Equal("0002"))

		old := hostedSecret(acme, first.ID)
		Expect(old.Status.State).To(Equal(hubv1alpha1.StateRevoked))
		Expect(old.Status.Reason).To(Equal(hubv1alpha1.RevokedSupersede))
		Expect(old.Status.SupersededBy).To(Equal(second.ID))
		Expect(old.Status.RevokedAt).NotTo(BeNil())
		Expect(activeIn(acme, "ANTHROPIC_API_KEY")).To(ConsistOf(second.ID))
		Expect(valueSecrets(acme)).To(HaveLen(1), "the superseded value's Secret is deleted")

		By("the old id is stale now, also under its alias")
		for _, field := range []string{"supersede_credential_id", "supersede_secret_id"} {
			code, body = store(owner, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-third-0003", field: first.ID})
			Expect(code).To(Equal(http.StatusConflict), string(body))
			Expect(decode[apiError](body).Error.Code).To(Equal("replacement_stale"))
		}
		By("the alias confirms too")
		code, body = store(owner, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-third-0003", "supersede_secret_id": second.ID})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		third := decode[record](body)

		Expect(list(owner, "")).To(ConsistOf(HaveField("ID", third.ID)))
		Expect(list(owner, "?status=revoked")).To(ConsistOf(HaveField("ID", first.ID), HaveField("ID", second.ID)))
		Expect(list(owner, "?status=all")).To(HaveLen(3))
		Expect(list(owner, "?org_id="+acme.UID)).To(ConsistOf(HaveField("ID", third.ID)))
	})

	It("keeps secrets of different slots apart: users, scopes and jobs", func() {
		code, _ := store(owner, map[string]any{"env_var": "GITHUB_TOKEN", "value": "ghp_owner_1111"})
		Expect(code).To(Equal(http.StatusCreated))
		code, _ = store(member, map[string]any{"env_var": "GITHUB_TOKEN", "value": "ghp_member_2222"})
		Expect(code).To(Equal(http.StatusCreated), "another user's slot")
		code, body := store(member, map[string]any{"scope": "job", "job_id": jobA, "env_var": "GITHUB_TOKEN", "value": "ghp_job_3333"})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		job := decode[record](body)
		Expect(job.Scope).To(Equal("job"))
		Expect(job.JobID).To(HaveValue(Equal(jobA)))
		code, body = store(owner, map[string]any{"scope": "job", "job_id": strings.ToUpper(jobA), "env_var": "GITHUB_TOKEN", "value": "ghp_job_4444"})
		Expect(code).To(Equal(http.StatusConflict), "a job's slot is shared by everyone storing for the job")
		Expect(decode[apiError](body).Error.Existing.ID).To(Equal(job.ID))

		Expect(list(owner, "")).To(HaveLen(3), "an owner lists the org's secrets")
		Expect(list(owner, "?scope=user")).To(HaveLen(2))
		Expect(list(owner, "?scope=job&job_id="+jobA)).To(ConsistOf(HaveField("ID", job.ID)))

		By("DELETE needs job_id for job scope")
		code, body = call(http.MethodDelete, "/v1/secrets", member.Token, map[string]any{"scope": "job", "env_var": "GITHUB_TOKEN"})
		Expect(code).To(Equal(http.StatusUnprocessableEntity), string(body))
		Expect(decode[apiError](body).Error.Details).To(ContainElement(HaveField("Field", "job_id")))
		Expect(revoke(member, map[string]any{"scope": "job", "job_id": jobA, "env_var": "GITHUB_TOKEN"})).To(Equal(1))
		Expect(revoke(member, map[string]any{"env_var": "GITHUB_TOKEN"})).To(Equal(1), "the member's own user secret")
		Expect(list(owner, "")).To(ConsistOf(HaveField("ValueLast4", "1111")), "the owner's secret is untouched")
	})

	It("revokes (keeping the record) and purges (deleting it)", func() {
		code, body := store(member, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-openai-5555"})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		id := decode[record](body).ID

		Expect(storedValues(acme)).To(HaveLen(1))
		Expect(revoke(member, map[string]any{"env_var": "OPENAI_API_KEY"})).To(Equal(1))
		hs := hostedSecret(acme, id)
		Expect(hs).NotTo(BeNil(), "revoke keeps the record")
		Expect(hs.Status.State).To(Equal(hubv1alpha1.StateRevoked))
		Expect(hs.Status.Reason).To(Equal(hubv1alpha1.RevokedByRequest))
		Expect(valueSecrets(acme)).To(BeEmpty(), "revoke deletes the value's Secret")
		Expect(list(member, "")).To(BeEmpty())
		Expect(list(member, "?status=revoked")).To(ConsistOf(And(HaveField("ID", id), HaveField("Status", "revoked"))))
		Expect(revoke(member, map[string]any{"env_var": "OPENAI_API_KEY"})).To(Equal(0), "nothing active is left")

		By("after a revoke the slot is free for a first store")
		code, body = store(member, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-openai-6666"})
		Expect(code).To(Equal(http.StatusCreated), string(body))

		By("purge deletes every record of the slot")
		Expect(revoke(member, map[string]any{"env_var": "OPENAI_API_KEY", "purge": true})).To(Equal(2))
		Expect(hostedSecrets(acme)).To(BeEmpty())
		Expect(valueSecrets(acme)).To(BeEmpty())
		Expect(list(member, "?status=all")).To(BeEmpty())
		Expect(revoke(member, map[string]any{"env_var": "OPENAI_API_KEY", "purge": true})).To(Equal(0))
		code, _ = store(member, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-openai-7777"})
		Expect(code).To(Equal(http.StatusCreated))
	})

	It("gives exactly one of 50 concurrent supersedes the slot", func() {
		code, body := store(owner, map[string]any{"env_var": "RACE_KEY", "value": "race-original"})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		orig := decode[record](body).ID

		codes := race(50, func(i int) (int, []byte) {
			return store(owner, map[string]any{"env_var": "RACE_KEY", "value": "race-value-" + string(rune('A'+i%26)), "supersede_credential_id": orig})
		})
		Expect(codes[http.StatusCreated]).To(HaveLen(1))
		Expect(codes[http.StatusConflict]).To(HaveLen(49))
		for _, b := range codes[http.StatusConflict] {
			Expect(decode[apiError](b).Error.Code).To(Equal("replacement_stale"))
		}
		winner := decode[record](codes[http.StatusCreated][0]).ID
		expectSlotSettled(acme, "RACE_KEY", winner, 2)
		Expect(hostedSecret(acme, orig).Status.SupersededBy).To(Equal(winner))
	})

	It("gives exactly one of 50 concurrent first stores the slot", func() {
		codes := race(50, func(i int) (int, []byte) {
			return store(owner, map[string]any{"env_var": "FIRST_KEY", "value": "first-value-" + string(rune('A'+i%26))})
		})
		Expect(codes[http.StatusCreated]).To(HaveLen(1))
		Expect(codes[http.StatusConflict]).To(HaveLen(49))
		winner := decode[record](codes[http.StatusCreated][0]).ID
		for _, b := range codes[http.StatusConflict] {
			e := decode[apiError](b)
			Expect(e.Error.Code).To(Equal("replacement_required"))
			Expect(e.Error.Existing.ID).To(Equal(winner))
		}
		expectSlotSettled(acme, "FIRST_KEY", winner, 1)
	})

	It("answers errors in the envelope, naming the field", func() {
		for _, tc := range []struct {
			token  string
			body   any
			status int
			code   string
			field  string
		}{
			{"", map[string]any{"env_var": "X", "value": "v"}, 401, "unauthenticated", ""},
			{"not-a-token", map[string]any{"env_var": "X", "value": "v"}, 401, "unauthenticated", ""},
			{owner.Token, `{"env_var": "X", "value": "v"`, 400, "bad_request", ""},
			{owner.Token, map[string]any{"env_var": "X", "value": "v", "colour": "red"}, 400, "bad_request", "colour"},
			{owner.Token, map[string]any{"env_var": "X", "value": 42}, 400, "bad_request", "value"},
			{owner.Token, map[string]any{"value": "v"}, 400, "bad_request", "env_var"},
			{owner.Token, map[string]any{"env_var": "lower", "value": "v"}, 422, "validation_failed", "env_var"},
			{owner.Token, map[string]any{"env_var": "X", "value": "v", "scope": "job"}, 422, "validation_failed", "job_id"},
			{owner.Token, map[string]any{"env_var": "X", "value": "v", "job_id": jobA}, 422, "validation_failed", "job_id"},
			{owner.Token, map[string]any{"env_var": "X", "value": "v", "provider": strings.Repeat("p", 65)}, 422, "validation_failed", "provider"},
			{owner.Token, map[string]any{"env_var": "X", "value": strings.Repeat("v", 64<<10+1)}, 422, "validation_failed", "value"},
			{owner.Token, map[string]any{"env_var": "X", "value": strings.Repeat("v", 2<<20)}, 413, "payload_too_large", ""},
			{owner.Token, map[string]any{"env_var": "X", "value": "v", "org_id": jobA}, 404, "not_found", ""},
		} {
			code, body := call(http.MethodPost, "/v1/secrets", tc.token, tc.body)
			Expect(code).To(Equal(tc.status), string(body))
			e := decode[apiError](body)
			Expect(e.Error.Code).To(Equal(tc.code), string(body))
			if tc.field != "" {
				Expect(e.Error.Details).To(ContainElement(HaveField("Field", tc.field)), string(body))
			}
		}
		Expect(hostedSecrets(acme)).To(BeEmpty(), "no failed request left anything behind")
		Expect(valueSecrets(acme)).To(BeEmpty())
	})
})

var _ = Describe("Organizations", func() {
	It("shows a caller nothing of another org", func() {
		acme, globex := newOrg("acme"), newOrg("globex")
		alice := newPerson(acme, "alice", "podium-org-owner")
		mallory := newPerson(globex, "mallory", "podium-org-owner")
		nobody := newPerson(acme, "nobody", "")
		code, _ := store(alice, map[string]any{"env_var": "SECRET_SAUCE", "value": "recipe-1234"})
		Expect(code).To(Equal(http.StatusCreated))

		Expect(list(mallory, "")).To(BeEmpty(), "mallory's default org is globex")
		code, body := call(http.MethodGet, "/v1/secrets?org_id="+acme.UID, mallory.Token, nil)
		Expect(code).To(Equal(http.StatusForbidden), string(body))
		code, _ = store(mallory, map[string]any{"env_var": "SECRET_SAUCE", "value": "x", "org_id": acme.UID})
		Expect(code).To(Equal(http.StatusForbidden))
		code, _ = call(http.MethodDelete, "/v1/secrets", mallory.Token, map[string]any{"env_var": "SECRET_SAUCE", "org_id": acme.UID, "purge": true})
		Expect(code).To(Equal(http.StatusForbidden))
		code, _ = call(http.MethodGet, "/v1/secrets", nobody.Token, nil)
		Expect(code).To(Equal(http.StatusForbidden), "an org's ServiceAccount without a role")
		Expect(list(alice, "")).To(HaveLen(1), "alice's secret survived")
	})
})

// race runs n calls at once and groups the bodies by status code.
func race(n int, f func(int) (int, []byte)) map[int][][]byte {
	var mu sync.Mutex
	out := map[int][][]byte{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer GinkgoRecover()
			<-start
			code, body := f(i)
			mu.Lock()
			out[code] = append(out[code], body)
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// expectSlotSettled checks that winner is the only active secret for envVar, that the
// slot's pointer names it, and that the losers left nothing behind.
func expectSlotSettled(o org, envVar, winner string, records int) {
	Expect(activeIn(o, envVar)).To(ConsistOf(winner))
	var leases coordinationv1.LeaseList
	Expect(k8sClient.List(ctx, &leases, client.InNamespace(o.Name), client.HasLabels{hubv1alpha1.LabelSlot})).To(Succeed())
	holders := []string{}
	for _, l := range leases.Items {
		holders = append(holders, *l.Spec.HolderIdentity)
	}
	Expect(holders).To(ContainElement(winner))
	Eventually(func(g Gomega) {
		n := 0
		for _, hs := range hostedSecrets(o) {
			if hs.Spec.EnvVar == envVar {
				n++
			}
		}
		g.Expect(n).To(Equal(records), "the losers' records are deleted")
		vals := 0
		for _, s := range valueSecrets(o) {
			if s.Labels[hubv1alpha1.LabelHostedSecret] != "" && strings.HasPrefix(s.Name, strings.ToLower(strings.ReplaceAll(envVar, "_", "-"))) {
				vals++
			}
		}
		g.Expect(vals).To(Equal(1), "only the winner's value Secret remains")
	}).Should(Succeed())
}

var _ = Describe("Two replicas", func() {
	It("agree on one winner: HTTP stores on this replica race stores of another", func() {
		acme := newOrg("replicas")
		owner := newPerson(acme, "owner", "podium-org-owner")
		// The other replica: the same store logic over its own uncached client, sharing
		// nothing with the operator's process but the apiserver.
		other := &secrets.Store{Lifecycle: &secrets.Lifecycle{
			Client: k8sClient, Reader: k8sClient, Slots: &secrets.Slots{Client: k8sClient, Reader: k8sClient}, Log: logr.Discard(),
			Place: secrets.Place{Namespace: valueNamespace},
		}}
		slot := secrets.Slot{Namespace: acme.Name, Scope: hubv1alpha1.ScopeUser, Owner: owner.User, EnvVar: "SHARED_KEY"}

		By("first stores")
		codes := race(40, func(i int) (int, []byte) {
			if i%2 == 0 {
				return idOf(store(owner, map[string]any{"env_var": "SHARED_KEY", "value": "replica-one-value"}))
			}
			hs, _, err := other.Store(ctx, secrets.StoreRequest{Slot: slot, Value: []byte("replica-two-value"), CreatedBy: owner.User})
			return outcome(hs, err)
		})
		Expect(codes[http.StatusCreated]).To(HaveLen(1))
		Expect(codes[http.StatusConflict]).To(HaveLen(39))
		winner := string(codes[http.StatusCreated][0])
		expectSlotSettled(acme, "SHARED_KEY", winner, 1)

		By("supersedes")
		codes = race(40, func(i int) (int, []byte) {
			if i%2 == 0 {
				return idOf(store(owner, map[string]any{"env_var": "SHARED_KEY", "value": "replica-one-value", "supersede_credential_id": winner}))
			}
			hs, _, err := other.Store(ctx, secrets.StoreRequest{Slot: slot, Value: []byte("replica-two-value"), CreatedBy: owner.User, SupersedeID: types.UID(winner)})
			return outcome(hs, err)
		})
		Expect(codes[http.StatusCreated]).To(HaveLen(1))
		Expect(codes[http.StatusConflict]).To(HaveLen(39))
		expectSlotSettled(acme, "SHARED_KEY", string(codes[http.StatusCreated][0]), 2)
	})
})

// idOf reduces the body of an HTTP 201 to the new secret's id.
func idOf(code int, body []byte) (int, []byte) {
	if code == http.StatusCreated {
		return code, []byte(decode[record](body).ID)
	}
	return code, body
}

// outcome maps a direct Store call to the status the API would answer, with the new id
// as the body of a 201.
func outcome(hs *hubv1alpha1.HostedSecret, err error) (int, []byte) {
	var rr *secrets.ReplacementRequiredError
	switch {
	case err == nil:
		return http.StatusCreated, []byte(hs.UID)
	case errors.As(err, &rr), errors.Is(err, secrets.ErrStale):
		return http.StatusConflict, nil
	default:
		return http.StatusInternalServerError, []byte(err.Error())
	}
}
