package secrets_test

import (
	"net/http"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

func declared(o org, name, owner, envVar, secretName string) *hubv1alpha1.HostedSecret {
	return &hubv1alpha1.HostedSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: name},
		Spec: hubv1alpha1.HostedSecretSpec{
			Scope: hubv1alpha1.ScopeUser, Owner: owner, EnvVar: envVar,
			SecretRef: hubv1alpha1.SecretValueRef{Name: secretName},
		},
	}
}

// grantedSecret is a Secret as a platform team applies it: not Podium's yet, but granted
// to the HostedSecret named grantTo with the hub.podium.dev/hosted-secret label.
func grantedSecret(o org, name, grantTo string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: name}, StringData: data}
	if grantTo != "" {
		s.Labels = map[string]string{hubv1alpha1.LabelHostedSecret: grantTo}
	}
	return s
}

func readyReason(g Gomega, o org, name string) string {
	hs := &hubv1alpha1.HostedSecret{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: o.Name, Name: name}, hs)).To(Succeed())
	c := meta.FindStatusCondition(hs.Status.Conditions, hubv1alpha1.ConditionReady)
	if c == nil {
		return ""
	}
	return c.Reason
}

var _ = Describe("Declarative HostedSecrets", func() {
	var (
		acme  org
		alice person
	)
	BeforeEach(func() {
		acme = newOrg("decl")
		alice = newPerson(acme, "alice", "podium-org-owner")
	})

	It("takes over an applied Secret, claims the slot and shows up in the API", func() {
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "anthropic", "anthropic", map[string]string{"value": "sk-ant-declared-9876"}))).To(Succeed())
		Expect(k8sClient.Create(ctx, declared(acme, "anthropic", alice.User, "ANTHROPIC_API_KEY", "anthropic"))).To(Succeed())

		Eventually(func(g Gomega) {
			hs := &hubv1alpha1.HostedSecret{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "anthropic"}, hs)).To(Succeed())
			g.Expect(hs.Status.State).To(Equal(hubv1alpha1.StateActive))
			g.Expect(hs.Status.ValueLast4).To(Equal("9876"))
			g.Expect(meta.IsStatusConditionTrue(hs.Status.Conditions, hubv1alpha1.ConditionReady)).To(BeTrue())
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "anthropic"}, s)).To(Succeed())
			g.Expect(s.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelManagedBy, hubv1alpha1.ManagedByPodium))
			g.Expect(s.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelHostedSecret, "anthropic"))
			g.Expect(metav1.IsControlledBy(s, hs)).To(BeTrue())
		}).Should(Succeed())
		Expect(list(alice, "")).To(ConsistOf(And(HaveField("EnvVar", "ANTHROPIC_API_KEY"), HaveField("ValueLast4", "9876"))))

		By("a store over HTTP into the same slot needs a supersede")
		code, body := store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-http-1111"})
		Expect(code).To(Equal(http.StatusConflict), string(body))

		By("a second declarative secret for the slot waits, with a reason")
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "anthropic-2", "anthropic-2", map[string]string{"value": "sk-ant-other-5555"}))).To(Succeed())
		Expect(k8sClient.Create(ctx, declared(acme, "anthropic-2", alice.User, "ANTHROPIC_API_KEY", "anthropic-2"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(readyReason(g, acme, "anthropic-2")).To(Equal(hubv1alpha1.ReasonSlotOccupied))
		}).Should(Succeed())
		Expect(activeIn(acme, "ANTHROPIC_API_KEY")).To(HaveLen(1))

		By("a change of the value is reflected in valueLast4")
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "anthropic"}}
		Expect(testenv.Update(ctx, k8sClient, s, func(s *corev1.Secret) { s.Data["value"] = []byte("sk-ant-rotated-4242") })).To(Succeed())
		Eventually(func(g Gomega) {
			hs := &hubv1alpha1.HostedSecret{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "anthropic"}, hs)).To(Succeed())
			g.Expect(hs.Status.ValueLast4).To(Equal("4242"))
		}).Should(Succeed())

		By("revoking over HTTP deletes the taken-over Secret")
		Expect(revoke(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY"})).To(Equal(1))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "anthropic"}, &corev1.Secret{}))).To(BeTrue())
	})

	It("reports a missing Secret as not granted, a missing key as a missing value, and recovers when it appears", func() {
		Expect(k8sClient.Create(ctx, declared(acme, "late", alice.User, "LATE_KEY", "late-secret"))).To(Succeed())
		// A missing Secret reads like one not granted: statuses tell nobody which exist.
		Eventually(func(g Gomega) { g.Expect(readyReason(g, acme, "late")).To(Equal(hubv1alpha1.ReasonSecretNotGranted)) }).Should(Succeed())
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "late-secret", "late", map[string]string{"other": "x"}))).To(Succeed())
		// The unlabelled Secret is outside the cache: the controller looks again on its
		// retry, so nudge it with a metadata change of the HostedSecret instead of waiting.
		hs := &hubv1alpha1.HostedSecret{}
		nudge := func(v string) {
			// The operator writes the object too (its recorded id, its status): read it
			// again on a conflict, and keep the annotations it recorded.
			Eventually(func(g Gomega) {
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "late"}, hs)).To(Succeed())
				if hs.Annotations == nil {
					hs.Annotations = map[string]string{}
				}
				hs.Annotations["nudge"] = v
				g.Expect(k8sClient.Update(ctx, hs)).To(Succeed())
			}).Should(Succeed())
		}
		nudge("1")
		By("a Secret without the key is still missing the value")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "late"}, hs)).To(Succeed())
			c := meta.FindStatusCondition(hs.Status.Conditions, hubv1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(ContainSubstring(`has no key "value"`))
		}).Should(Succeed())
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "late-secret"}}
		Expect(testenv.Update(ctx, k8sClient, s, func(s *corev1.Secret) { s.Data["value"] = []byte("short") })).To(Succeed())
		nudge("2")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "late"}, hs)).To(Succeed())
			g.Expect(hs.Status.State).To(Equal(hubv1alpha1.StateActive))
			g.Expect(hs.Status.ValueLast4).To(BeEmpty(), "a value under 8 characters shows no last four")
		}).Should(Succeed())
	})

	It("neither reads nor adopts a Secret that was not granted to it", func() {
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "someone-elses", "", map[string]string{"value": "not-yours-at-all-7777"}))).To(Succeed())
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "for-another", "another", map[string]string{"value": "not-yours-either-8888"}))).To(Succeed())
		Expect(k8sClient.Create(ctx, declared(acme, "grab", alice.User, "GRAB_KEY", "someone-elses"))).To(Succeed())
		Expect(k8sClient.Create(ctx, declared(acme, "grab-2", alice.User, "GRAB_TWO", "for-another"))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(readyReason(g, acme, "grab")).To(Equal(hubv1alpha1.ReasonSecretNotGranted))
			g.Expect(readyReason(g, acme, "grab-2")).To(Equal(hubv1alpha1.ReasonSecretNotGranted))
		}).Should(Succeed())
		for _, name := range []string{"grab", "grab-2"} {
			hs := &hubv1alpha1.HostedSecret{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: name}, hs)).To(Succeed())
			Expect(hs.Status.State).To(BeEmpty())
			Expect(hs.Status.ValueLast4).To(BeEmpty())
		}
		for _, name := range []string{"someone-elses", "for-another"} {
			s := &corev1.Secret{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: name}, s)).To(Succeed())
			Expect(s.Labels).NotTo(HaveKey(hubv1alpha1.LabelManagedBy))
			Expect(s.OwnerReferences).To(BeEmpty())
		}
		By("granting it lets the HostedSecret take it over")
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "someone-elses"}}
		Expect(testenv.Update(ctx, k8sClient, s, func(s *corev1.Secret) {
			s.Labels = map[string]string{hubv1alpha1.LabelHostedSecret: "grab"}
		})).To(Succeed())
		hs := &hubv1alpha1.HostedSecret{}
		Eventually(func(g Gomega) { // the unlabelled Secret is outside the cache: nudge, again on a conflict
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "grab"}, hs)).To(Succeed())
			if hs.Annotations == nil {
				hs.Annotations = map[string]string{}
			}
			hs.Annotations["nudge"] = "1"
			g.Expect(k8sClient.Update(ctx, hs)).To(Succeed())
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "grab"}, hs)).To(Succeed())
			g.Expect(hs.Status.State).To(Equal(hubv1alpha1.StateActive))
			g.Expect(hs.Status.ValueLast4).To(Equal("7777"))
		}).Should(Succeed())
	})

	It("removes a value Secret whose HostedSecret is gone", func() {
		stray := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "stray", Labels: map[string]string{
				hubv1alpha1.LabelManagedBy: hubv1alpha1.ManagedByPodium, hubv1alpha1.LabelHostedSecret: "gone",
			}},
			StringData: map[string]string{"value": "left-behind-value"},
		}
		Expect(k8sClient.Create(ctx, stray)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(stray), &corev1.Secret{}))
		}).Should(BeTrue())
	})

	It("makes the shipped sample active", func() {
		demo := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
		Expect(k8sClient.Create(ctx, demo)).To(Succeed())
		adminKubectl()("apply", "-f", filepath.Join(testenv.RepoRoot(), "config", "samples", "hostedsecret_demo.yaml"))
		Eventually(func(g Gomega) {
			hs := &hubv1alpha1.HostedSecret{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "github-token-alice"}, hs)).To(Succeed())
			g.Expect(hs.Status.State).To(Equal(hubv1alpha1.StateActive))
			g.Expect(hs.Status.ValueLast4).To(Equal("0000"))
		}).Should(Succeed())
	})

	It("rejects malformed HostedSecrets at apply time", func() {
		for name, spec := range map[string]hubv1alpha1.HostedSecretSpec{
			"job-id-in-user-scope": {Scope: "user", Owner: "u", JobID: jobA, EnvVar: "X", SecretRef: hubv1alpha1.SecretValueRef{Name: "s"}},
			"job-without-id":       {Scope: "job", EnvVar: "X", SecretRef: hubv1alpha1.SecretValueRef{Name: "s"}},
			"user-without-owner":   {Scope: "user", EnvVar: "X", SecretRef: hubv1alpha1.SecretValueRef{Name: "s"}},
			"lower-case-env":       {Scope: "user", Owner: "u", EnvVar: "x", SecretRef: hubv1alpha1.SecretValueRef{Name: "s"}},
			"bad-job-id":           {Scope: "job", JobID: "42", EnvVar: "X", SecretRef: hubv1alpha1.SecretValueRef{Name: "s"}},
			"long-provider":        {Scope: "user", Owner: "u", EnvVar: "X", Provider: strings.Repeat("p", 65), SecretRef: hubv1alpha1.SecretValueRef{Name: "s"}},
		} {
			hs := &hubv1alpha1.HostedSecret{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: name}, Spec: spec}
			err := k8sClient.Create(ctx, hs)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%s: %v", name, err)
		}
		By("the slot fields are immutable")
		hs := declared(acme, "fixed", alice.User, "FIXED", "fixed")
		Expect(k8sClient.Create(ctx, hs)).To(Succeed())
		Eventually(func() error { // the controller may write the status in between: retry conflicts
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(hs), hs); err != nil {
				return err
			}
			hs.Spec.EnvVar = "CHANGED"
			return k8sClient.Update(ctx, hs)
		}).Should(Satisfy(apierrors.IsInvalid))
	})
})
