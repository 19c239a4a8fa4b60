package secrets_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// secretHealth waits until kstatus computes want for the HostedSecret o/name, with the
// Ready reason given, and the Stalled condition (when Failed) describing its generation.
func secretHealth(o org, name string, want status.Status, reason string) {
	GinkgoHelper()
	hs := &hubv1alpha1.HostedSecret{}
	hs.Namespace, hs.Name = o.Name, name
	Eventually(func(g Gomega) {
		res, err := testenv.Health(ctx, k8sClient, hs)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Status).To(Equal(want), res.Message)
		g.Expect(readyReason(g, o, name)).To(Equal(reason))
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(hs), hs)).To(Succeed())
		stalled := meta.FindStatusCondition(hs.Status.Conditions, hubv1alpha1.ConditionStalled)
		if want == status.FailedStatus {
			g.Expect(stalled).NotTo(BeNil())
			g.Expect(stalled.Reason).To(Equal(reason))
			g.Expect(stalled.ObservedGeneration).To(Equal(hs.Generation))
		} else {
			g.Expect(stalled).To(BeNil())
		}
	}).Should(Succeed())
}

var _ = Describe("HostedSecret health as GitOps tools compute it (kstatus)", func() {
	var (
		acme  org
		alice person
	)
	BeforeEach(func() {
		acme = newOrg("health")
		alice = newPerson(acme, "alice", "podium-org-owner")
	})

	It("is Current when active and Failed for what only its author can fix", func() {
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "key", "key", map[string]string{"value": "sk-ant-health-1234"}))).To(Succeed())
		Expect(k8sClient.Create(ctx, declared(acme, "key", alice.User, "ANTHROPIC_API_KEY", "key"))).To(Succeed())
		secretHealth(acme, "key", status.CurrentStatus, hubv1alpha1.ReasonActive)

		By("another secret for the same slot")
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "key-2", "key-2", map[string]string{"value": "sk-ant-health-5678"}))).To(Succeed())
		Expect(k8sClient.Create(ctx, declared(acme, "key-2", alice.User, "ANTHROPIC_API_KEY", "key-2"))).To(Succeed())
		secretHealth(acme, "key-2", status.FailedStatus, hubv1alpha1.ReasonSlotOccupied)

		By("a Secret granted to it without the key")
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "keyless", "missing", map[string]string{"other": "x"}))).To(Succeed())
		Expect(k8sClient.Create(ctx, declared(acme, "missing", alice.User, "MISSING_KEY", "keyless"))).To(Succeed())
		secretHealth(acme, "missing", status.FailedStatus, hubv1alpha1.ReasonValueMissing)

		By("a Secret that does not exist")
		Expect(k8sClient.Create(ctx, declared(acme, "nowhere", alice.User, "NOWHERE_KEY", "nowhere"))).To(Succeed())
		secretHealth(acme, "nowhere", status.FailedStatus, hubv1alpha1.ReasonSecretNotGranted)

		By("a Secret that was not granted to it")
		Expect(k8sClient.Create(ctx, grantedSecret(acme, "not-granted", "", map[string]string{"value": "sk-not-granted-0000"}))).To(Succeed())
		Expect(k8sClient.Create(ctx, declared(acme, "grab", alice.User, "GRAB_KEY", "not-granted"))).To(Succeed())
		secretHealth(acme, "grab", status.FailedStatus, hubv1alpha1.ReasonSecretNotGranted)

		By("a revoked secret delivers nothing any more")
		Expect(revoke(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY"})).To(Equal(1))
		secretHealth(acme, "key", status.FailedStatus, hubv1alpha1.ReasonRevoked)
	})
})
