package runpolicy_test

import (
	"bytes"
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/testenv"
)

// A ServiceAccount that is a Podium user in another namespace (docs/design/delivery.md, "Runs
// cannot be changed or impersonated"): a RoleBinding in org2 binds demo/ci-x to the
// member role. Kubernetes lets mallory, who may create Pods in demo, run one as
// demo/ci-x and take its token, with which she would start runs in org2 that receive
// ci-x's keys. podium-run-identity asks the authorizer about demo only; the operator
// records ci-x on demo, and podium-run-identity-elsewhere refuses her.
var _ = Describe("ServiceAccounts that are Podium users in another namespace", Ordered, ContinueOnFailure, func() {
	var demo, org2, crowd string
	var mallory, ciX, platform, dora person

	newNS := func(prefix string) string {
		o := testenv.Namespace(prefix)
		Expect(k8sClient.Create(ctx, o)).To(Succeed())
		return o.Name
	}
	bind := func(ns, name string, subject rbacv1.Subject) {
		GinkgoHelper()
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "podium-org-member"},
			Subjects:   []rbacv1.Subject{subject},
		})).To(Succeed())
	}
	refusedAs := func(g Gomega, err error, sa string) {
		g.Expect(err).To(HaveOccurred(), "admitted; want refused for running as %s", sa)
		var status apierrors.APIStatus
		g.Expect(apierrors.IsForbidden(err) && errors.As(err, &status)).To(BeTrue(), "%v", err)
		g.Expect(status.Status().Message).To(ContainSubstring(identityRule))
		g.Expect(status.Status().Message).To(ContainSubstring("serviceAccountName " + sa + " "))
	}

	BeforeAll(func() {
		demo, org2, crowd = newNS("demo"), newNS("org2"), newNS("crowd")
		mallory = newPerson(demo, "mallory", "podium-org-member", "test-workloads")
		ciX = newPerson(demo, "ci-x", "", "test-workloads")
		platform = newPerson(demo, "platform", "", "test-workloads", "test-impersonate-serviceaccounts")
		dora = newPerson(crowd, "dora", "", "test-workloads")
		for _, sa := range []string{"builder", "reader"} {
			Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: demo, Name: sa}})).To(Succeed())
		}
		By("ci-x is a member of org2 only; reader may only create Pods there, no Podium right")
		bind(org2, "ci-x-member", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: demo, Name: "ci-x"})
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: org2, Name: "reader-workloads"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "test-workloads"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: demo, Name: "reader"}},
		})).To(Succeed())
	})

	It("TestRunPolicyRefusesUsersOfOtherNamespaces: a member of demo may not run a Pod, or a Deployment, as demo/ci-x", func() {
		Eventually(func(g Gomega) {
			refusedAs(g, createPod(mallory, "as-ci-x", podSpec("ci-x", "tool:1")), "ci-x")
		}).Should(Succeed())
		_, err := mallory.CS.AppsV1().Deployments(demo).Create(ctx, deployment("as-ci-x", "ci-x", 1), metav1.CreateOptions{})
		refusedAs(Default, err, "ci-x")
	})

	It("TestRunPolicyAllowsUsersOfOtherNamespacesThemselves: ci-x itself, and whoever may impersonate it, run as ci-x", func() {
		Expect(createPod(ciX, "ci-x-itself", podSpec("ci-x", "tool:1"))).To(Succeed())
		Expect(createPod(platform, "platform-as-ci-x", podSpec("ci-x", "tool:1"))).To(Succeed())
		By("and the ReplicaSet controller makes the Pods of ci-x's own Deployment")
		_, err := ciX.CS.AppsV1().Deployments(demo).Create(ctx, deployment("ci-x-own", "ci-x", 1), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		awaitPods(demo, "ci-x-own", 1)
	})

	It("TestRunPolicyAllowsPlainServiceAccounts: a ServiceAccount with no Podium right anywhere, or other rights elsewhere, and default, as before", func() {
		Expect(createPod(mallory, "as-builder", podSpec("builder", "tool:1"))).To(Succeed())
		Expect(createPod(mallory, "as-reader", podSpec("reader", "tool:1"))).To(Succeed())
		Expect(createPod(mallory, "as-default", podSpec("", "tool:1"))).To(Succeed())
		ns := &corev1.Namespace{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: demo}, ns)).To(Succeed())
		Expect(ns.Annotations).To(HaveKeyWithValue("hub.podium.dev/user-serviceaccounts", "ci-x"))
	})

	It("TestRunPolicyRefusesGroupsOfOtherNamespaces: a group of a namespace's ServiceAccounts bound elsewhere makes each of them, default too, a user", func() {
		Expect(createPod(dora, "before", podSpec("", "tool:1"))).To(Succeed())
		bind(org2, "crowd-members", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts:" + crowd})
		Eventually(func(g Gomega) {
			refusedAs(g, createPod(dora, "as-default", podSpec("", "tool:1")), "default")
		}).Should(Succeed())
		By("and unbinding it lifts the record")
		Expect(k8sClient.Delete(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: org2, Name: "crowd-members"}})).To(Succeed())
		Eventually(func() error { return createPod(dora, "after", podSpec("", "tool:1")) }).Should(Succeed())
	})

	It("TestRunPolicyFollowsBindingSubjects: a ServiceAccount removed from a RoleBinding elsewhere is no longer recorded", func() {
		Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: demo, Name: "former"}})).To(Succeed())
		bind(org2, "former-member", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: demo, Name: "former"})
		Eventually(func(g Gomega) {
			refusedAs(g, createPod(mallory, "as-former", podSpec("former", "tool:1")), "former")
		}).Should(Succeed())
		rb := &rbacv1.RoleBinding{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: org2, Name: "former-member"}, rb)).To(Succeed())
		rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: org2, Name: "someone-of-org2"}}
		Expect(k8sClient.Update(ctx, rb)).To(Succeed())
		Eventually(func() error { return createPod(mallory, "as-former-unbound", podSpec("former", "tool:1")) }).Should(Succeed())
	})

	It("TestRunPolicyFollowsRoles: a role bound elsewhere that gains a Podium right later makes its ServiceAccounts users then", func() {
		Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: demo, Name: "late"}})).To(Succeed())
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-" + org2 + "-late"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"hub.podium.dev"}, Resources: []string{"hostedsecrets"}, Verbs: []string{"get", "list"}}}}
		Expect(k8sClient.Create(ctx, role)).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: org2, Name: "late"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccount:" + demo + ":late"}},
		})).To(Succeed())
		Expect(createPod(mallory, "as-late-reading", podSpec("late", "tool:1"))).To(Succeed(), "reading is no Podium use")
		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"create"}})
		Expect(k8sClient.Update(ctx, role)).To(Succeed())
		Eventually(func(g Gomega) {
			refusedAs(g, createPod(mallory, "as-late", podSpec("late", "tool:1")), "late")
		}).Should(Succeed())
	})

	// What the rule costs where no ServiceAccount is a user elsewhere: nothing. The
	// apiserver times a policy's match conditions when one of them is false (and counts
	// its validations when they deny or fail), by policy name: a label update of a Pod,
	// which leaves what runs as it was, is let go by the match condition
	// changes-what-runs, and so counted wherever the policy is evaluated at all.
	It("TestRunPolicyElsewhereCostsNothingUnlabelled: the Pods of a namespace with no such record are not evaluated by the policy", func() {
		quiet := newNS("quiet")
		carl := newPerson(quiet, "carl", "", "test-workloads")
		label := func(p person, name string) error {
			_, err := p.CS.CoreV1().Pods(p.NS).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"seen":"yes"}}}`), metav1.PatchOptions{})
			return err
		}
		Expect(createPod(mallory, "cost-in-demo", podSpec("builder", "tool:1"))).To(Succeed())
		before := evaluations("podium-run-identity-elsewhere")
		for i := range 20 {
			name := fmt.Sprintf("plain-%d", i)
			Expect(createPod(carl, name, podSpec("", "tool:1"))).To(Succeed())
			Expect(label(carl, name)).To(Succeed())
		}
		Expect(evaluations("podium-run-identity-elsewhere")).To(Equal(before), "Pods of an unrecorded namespace reached the policy")
		By("while the same update in demo, recorded, is evaluated")
		Expect(label(mallory, "cost-in-demo")).To(Succeed())
		Expect(evaluations("podium-run-identity-elsewhere")).To(BeNumerically(">", before))
	})
})

// evaluations is how many times the apiserver evaluated the match conditions or the
// validations of the admission policy named policy (its metrics' sample counts).
func evaluations(policy string) uint64 {
	GinkgoHelper()
	raw, err := clientset.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	Expect(err).NotTo(HaveOccurred())
	var n uint64
	for _, family := range []struct{ name, label string }{
		{"apiserver_validating_admission_policy_check_duration_seconds", "policy"},
		{"apiserver_admission_match_condition_evaluation_seconds", "name"},
	} {
		for _, m := range testenv.Series(fams[family.name], map[string]string{family.label: policy}) {
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return n
}
