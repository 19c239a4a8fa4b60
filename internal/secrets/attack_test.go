package secrets_test

import (
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
)

// The attacks of an org member (the shipped podium-org-member role, no right on
// Secrets) against other users' hosted secrets, replayed exactly as they were found
// (docs/secrets.md, "Ownership"). Each must fail.

// kubectlAs is a client that talks to the apiserver with p's token, as kubectl would.
func kubectlAs(p person) client.Client {
	c := rest.AnonymousClientConfig(cfg)
	c.BearerToken = p.Token
	cl, err := client.New(c, client.Options{Scheme: scheme.Scheme})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return cl
}

// byPolicy says err is the ownership admission policy's refusal naming field.
func byPolicy(err error, field string) {
	ExpectWithOffset(1, apierrors.IsForbidden(err)).To(BeTrue(), "want 403 Forbidden, got %v", err)
	ExpectWithOffset(1, err.Error()).To(ContainSubstring("podium-hostedsecret-ownership"))
	ExpectWithOffset(1, err.Error()).To(ContainSubstring(field))
}

// keepBusy creates n unrelated HostedSecrets, so that the controller's worker is busy
// when the attack happens (the variant that made the hijack work every time). The
// returned func deletes them: each names a missing Secret, which the controller looks up
// again every 30 s for as long as it exists, so busy objects left behind would keep the
// one worker of every later spec of the suite busy too (800 of them made the suite's
// later waits time out on a loaded machine).
func keepBusy(o org, n int) (done func()) {
	for i := range n {
		hs := declared(o, fmt.Sprintf("busy-%d", i), "busy-user", "BUSY_"+fmt.Sprint(i), "busy-missing")
		hs.Name, hs.GenerateName = "", "busy-"
		hs.Labels = map[string]string{busyLabel: "true"}
		ExpectWithOffset(1, k8sClient.Create(ctx, hs)).To(Succeed())
	}
	return func() {
		GinkgoHelper()
		Expect(k8sClient.DeleteAllOf(ctx, &hubv1alpha1.HostedSecret{}, client.InNamespace(o.Name), client.MatchingLabels{busyLabel: "true"})).To(Succeed())
	}
}

// busyLabel marks keepBusy's HostedSecrets.
const busyLabel = "test.podium.dev/busy"

// ownedBy lists the HostedSecrets of o that name owner for envVar.
func ownedBy(o org, owner, envVar string) []hubv1alpha1.HostedSecret {
	var out []hubv1alpha1.HostedSecret
	for _, hs := range hostedSecrets(o) {
		if hs.Spec.Owner == owner && hs.Spec.EnvVar == envVar {
			out = append(out, hs)
		}
	}
	return out
}

var _ = Describe("Attacks on other users' hosted secrets", func() {
	var (
		acme                 org
		owner, alice, mallor person
	)
	BeforeEach(func() {
		acme = newOrg("attack")
		owner = newPerson(acme, "owner", "podium-org-owner")
		alice = newPerson(acme, "alice", "podium-org-member")
		mallor = newPerson(acme, "mallory", "podium-org-member")
	})

	storeAs := func(p person, env, value string, extra ...any) record {
		fields := map[string]any{"env_var": env, "value": value}
		for i := 0; i+1 < len(extra); i += 2 {
			fields[extra[i].(string)] = extra[i+1]
		}
		code, body := store(p, fields)
		ExpectWithOffset(1, code).To(Equal(http.StatusCreated), string(body))
		return decode[record](body)
	}

	It("1. hijack by delete-and-recreate: a member cannot delete another user's secret, even with the worker kept busy", func() {
		for round := range 3 {
			env := fmt.Sprintf("HIJACK_%d", round)
			victim := storeAs(alice, env, "sk-victim-value-"+fmt.Sprint(round)+"-abcd")
			hs := hostedSecret(acme, victim.ID)
			Expect(hs).NotTo(BeNil())
			done := keepBusy(acme, 100)

			m := kubectlAs(mallor)
			byPolicy(m.Delete(ctx, hs.DeepCopy()), "spec.owner")
			theirs := declared(acme, hs.Name, mallor.User, env, hs.Spec.SecretRef.Name)
			Expect(apierrors.IsAlreadyExists(m.Create(ctx, theirs))).To(BeTrue())

			Expect(activeIn(acme, env)).To(ConsistOf(victim.ID))
			Expect(ownedBy(acme, mallor.User, env)).To(BeEmpty())
			done()
		}
	})

	It("1b. a value is bound to its object by UID: a same-name object created after a delete never gets it", func() {
		// The delete-and-recreate done by someone admission lets through (an org owner,
		// here the admin), with the controller's worker kept busy: the new object must
		// not inherit the old one's value, whatever the labels say.
		for round := range 5 {
			env := fmt.Sprintf("REBIND_%d", round)
			victim := storeAs(alice, env, "sk-victim-bound-"+fmt.Sprint(round)+"-wxyz")
			hs := hostedSecret(acme, victim.ID)
			Expect(hs).NotTo(BeNil())
			done := keepBusy(acme, 100)

			Expect(k8sClient.Delete(ctx, hs)).To(Succeed())
			again := declared(acme, hs.Name, mallor.User, env, hs.Spec.SecretRef.Name)
			Eventually(func() error { return k8sClient.Create(ctx, again.DeepCopy()) }).Should(Succeed())

			Eventually(func(g Gomega) {
				g.Expect(readyReason(g, acme, hs.Name)).To(Equal(hubv1alpha1.ReasonSecretNotGranted))
			}).Should(Succeed())
			Consistently(func(g Gomega) {
				cur := &hubv1alpha1.HostedSecret{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(hs), cur)).To(Succeed())
				g.Expect(cur.UID).NotTo(Equal(hs.UID))
				g.Expect(cur.Status.State).NotTo(Equal(hubv1alpha1.StateActive))
				g.Expect(cur.Status.ValueLast4).To(BeEmpty())
				s := &corev1.Secret{}
				err := k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: hs.Spec.SecretRef.Name}, s)
				if err == nil {
					g.Expect(metav1.IsControlledBy(s, cur)).To(BeFalse(), "the value Secret was re-parented")
					for _, o := range s.OwnerReferences {
						g.Expect(o.UID).NotTo(Equal(cur.UID))
					}
				} else {
					g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
				}
			}, "3s", "100ms").Should(Succeed())
			for _, hs := range ownedBy(acme, mallor.User, env) {
				Expect(hs.Status.State).NotTo(Equal(hubv1alpha1.StateActive))
			}
			done()
		}
	})

	It("2. planting: nobody names another owner without manage-others, with kubectl or over HTTP", func() {
		m := kubectlAs(mallor)
		By("a user-scope secret for the org owner")
		planted := declared(acme, "planted", owner.User, "ANTHROPIC_API_KEY", "planted")
		byPolicy(m.Create(ctx, planted), "spec.owner")

		By("after storing a value of one's own and recreating its HostedSecret for the owner")
		mine := storeAs(mallor, "ANTHROPIC_API_KEY", "sk-attacker-controlled-0001")
		hs := hostedSecret(acme, mine.ID)
		again := declared(acme, "planted-2", owner.User, "ANTHROPIC_API_KEY", hs.Spec.SecretRef.Name)
		byPolicy(m.Create(ctx, again), "spec.owner")

		By("a job-scope secret that claims another user stored it")
		job := &hubv1alpha1.HostedSecret{
			ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "planted-job",
				Annotations: map[string]string{hubv1alpha1.AnnotationCreatedBy: owner.User}},
			Spec: hubv1alpha1.HostedSecretSpec{Scope: hubv1alpha1.ScopeJob, JobID: jobA, EnvVar: "X", SecretRef: hubv1alpha1.SecretValueRef{Name: "x"}},
		}
		byPolicy(m.Create(ctx, job), "created-by")

		By("over HTTP there is no owner to name")
		code, body := store(mallor, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-attacker-0002", "owner": owner.User})
		Expect(code).To(Equal(http.StatusBadRequest), string(body))

		By("nothing is the owner's, and preflight says so")
		for _, hs := range hostedSecrets(acme) {
			Expect(hs.Spec.Owner).NotTo(Equal(owner.User))
		}
		code, body = call(http.MethodPost, "/v1/secrets/preflight", owner.Token, map[string]any{
			"organization": acme.Name,
			"config":       map[string]any{"agents": []any{map[string]any{"name": "a", "model_name": "anthropic/claude-opus-4", "secrets": []string{"ANTHROPIC_API_KEY"}}}},
		})
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(decode[map[string]any](body)["ok"]).To(BeFalse())

		By("the org owner may store for another user (manage-others)")
		o := kubectlAs(owner)
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "for-alice", "for-alice", map[string]string{"value": "sk-given-by-owner-7777"}))).To(Succeed())
		Expect(o.Create(ctx, declared(acme, "for-alice", alice.User, "GIVEN_KEY", "for-alice"))).To(Succeed())
		Eventually(func() []record { return list(alice, "?scope=user") }).Should(ContainElement(HaveField("EnvVar", "GIVEN_KEY")))
	})

	It("3. other users' records: no delete with kubectl, no revoke or purge of another's job secret over HTTP", func() {
		aliceUser := storeAs(alice, "ALICE_KEY", "sk-alice-user-00001111")
		aliceJob := storeAs(alice, "JOB_KEY", "sk-alice-job-00002222", "scope", "job", "job_id", jobA)
		m := kubectlAs(mallor)

		By("kubectl delete of another user's user-scope and job-scope secrets")
		byPolicy(m.Delete(ctx, hostedSecret(acme, aliceUser.ID)), "spec.owner")
		byPolicy(m.Delete(ctx, hostedSecret(acme, aliceJob.ID)), "created-by")
		Expect(apierrors.IsForbidden(m.DeleteAllOf(ctx, &hubv1alpha1.HostedSecret{}, client.InNamespace(acme.Name)))).To(BeTrue())

		By("HTTP revoke and purge of another user's job-scope secret")
		for _, purge := range []bool{false, true} {
			code, body := call(http.MethodDelete, "/v1/secrets", mallor.Token, map[string]any{"scope": "job", "job_id": jobA, "env_var": "JOB_KEY", "purge": purge})
			Expect(code).To(Equal(http.StatusForbidden), string(body))
			Expect(string(body)).To(ContainSubstring("manage-others"))
		}
		Expect(activeIn(acme, "ALICE_KEY")).To(ConsistOf(aliceUser.ID))
		Expect(activeIn(acme, "JOB_KEY")).To(ConsistOf(aliceJob.ID))

		By("a purge is all or nothing: one record of another user refuses the whole slot")
		own := storeAs(owner, "JOB_KEY", "sk-owner-job-00003333", "scope", "job", "job_id", jobA, "supersede_credential_id", aliceJob.ID)
		code, body := call(http.MethodDelete, "/v1/secrets", alice.Token, map[string]any{"scope": "job", "job_id": jobA, "env_var": "JOB_KEY", "purge": true})
		Expect(code).To(Equal(http.StatusForbidden), string(body))
		Expect(hostedSecret(acme, aliceJob.ID)).NotTo(BeNil())
		Expect(activeIn(acme, "JOB_KEY")).To(ConsistOf(own.ID))

		By("the one who stored it, and an org owner, may")
		Expect(revoke(owner, map[string]any{"scope": "job", "job_id": jobA, "env_var": "JOB_KEY", "purge": true})).To(Equal(2))
		mine := storeAs(mallor, "JOB_KEY", "sk-mallory-job-00004444", "scope", "job", "job_id", jobA)
		Expect(revoke(mallor, map[string]any{"scope": "job", "job_id": jobA, "env_var": "JOB_KEY"})).To(Equal(1))
		Expect(hostedSecret(acme, mine.ID).Status.State).To(Equal(hubv1alpha1.StateRevoked))
		Expect(m.Delete(ctx, hostedSecret(acme, mine.ID))).To(Succeed())
		Expect(kubectlAs(alice).Delete(ctx, hostedSecret(acme, aliceUser.ID))).To(Succeed())
	})

	It("a HostedSecret's status does not tell which Secrets exist or how they are labelled", func() {
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "exists-unlabelled", "", map[string]string{"value": "sk-unlabelled-5555"}))).To(Succeed())
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "exists-for-other", "someone-else", map[string]string{"value": "sk-for-other-6666"}))).To(Succeed())
		m := kubectlAs(mallor)
		probes := map[string]string{"probe-missing": "does-not-exist", "probe-unlabelled": "exists-unlabelled", "probe-other": "exists-for-other"}
		for name, target := range probes {
			Expect(m.Create(ctx, declared(acme, name, mallor.User, "PROBE_"+strings.ToUpper(strings.TrimPrefix(name, "probe-")), target))).To(Succeed())
		}
		seen := map[string]string{}
		Eventually(func(g Gomega) {
			for name, target := range probes {
				hs := &hubv1alpha1.HostedSecret{}
				g.Expect(m.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: name}, hs)).To(Succeed())
				c := meta.FindStatusCondition(hs.Status.Conditions, hubv1alpha1.ConditionReady)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal(hubv1alpha1.ReasonSecretNotGranted))
				// Everything but the names the HostedSecret itself holds is the same.
				seen[name] = strings.NewReplacer(target, "<ref>", name, "<name>").Replace(c.Message)
			}
		}).Should(Succeed())
		Expect(seen["probe-unlabelled"]).To(Equal(seen["probe-missing"]))
		Expect(seen["probe-other"]).To(Equal(seen["probe-missing"]))
		Expect(seen["probe-missing"]).NotTo(ContainSubstring("someone-else"))
	})
})
