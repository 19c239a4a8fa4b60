package provenance_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// A run's Pod changed after it was created (docs/verified-rows.md, "A changed run").

// reportImage reports pod's container running image with digest d after restarts
// restarts, as the kubelet does once it restarted the container.
func reportImage(pod *corev1.Pod, d string, restarts int32) *corev1.Pod {
	cur := &corev1.Pod{}
	ExpectWithOffset(1, k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), cur)).To(Succeed())
	now := metav1.Now()
	for i := range cur.Status.ContainerStatuses {
		s := &cur.Status.ContainerStatuses[i]
		s.Image, s.ImageID, s.RestartCount = cur.Spec.Containers[i].Image, "evil.example/other@"+d, restarts
		s.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	}
	out, err := clientset.CoreV1().Pods(cur.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return out
}

// rescore writes score into row from pod (its Pod-bound token) and returns the settled row.
func rescore(pod *corev1.Pod, row *hubv1alpha1.LeaderboardRow, score float64) *hubv1alpha1.LeaderboardRow {
	c := inPod(pod)
	EventuallyWithOffset(1, func(g Gomega) {
		cur := &hubv1alpha1.LeaderboardRow{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(row), cur)).To(Succeed())
		cur.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf(`{"score":%v}`, score))}
		g.Expect(c.Update(ctx, cur)).To(Succeed())
	}).Should(Succeed())
	return settled(row)
}

var _ = Describe("Verified rows of a changed run", func() {
	const evil = "sha256:6666666666666666666666666666666666666666666666666666666666666666"

	It("does not verify values its Pod writes after the requester swapped the Pod's image", func() {
		ns := newOrg()
		alice := newMember(ns, "alice")
		lb := newBoard(ns, "main", "")
		pod := runJob(alice, "eval")
		Expect(pod.Generation).To(Equal(int64(1)))

		before := rowOf(lb, "before", 0.4)
		Expect(inPod(pod).Create(ctx, before)).To(Succeed())
		Expect(verifiedReason(settled(before))).To(Equal("True/" + hubv1alpha1.ReasonRunVerified))
		untouched := rowOf(lb, "untouched", 0.3)
		Expect(inPod(pod).Create(ctx, untouched)).To(Succeed())
		Expect(verifiedReason(settled(untouched))).To(Equal("True/" + hubv1alpha1.ReasonRunVerified))

		// The attack: alice, the run's requester, swaps the image of her own running
		// Pod (Pods allow image updates) ...
		Eventually(func(g Gomega) {
			cur := &corev1.Pod{}
			g.Expect(alice.C.Get(ctx, client.ObjectKeyFromObject(pod), cur)).To(Succeed())
			cur.Spec.Containers[0].Image = "evil.example/other:1"
			g.Expect(alice.C.Update(ctx, cur)).To(Succeed())
		}).Should(Succeed())

		// ... and writes with the Pod's token before the kubelet reported the restart
		// (the status still names the first image's digest) ...
		got := rescore(pod, before, 0.99)
		Expect(verifiedReason(got)).To(Equal("False/" + hubv1alpha1.ReasonPodChanged))
		Expect(got.Status.Provenance).To(BeNil())
		after := rowOf(lb, "after", 0.98)
		Expect(inPod(pod).Create(ctx, after)).To(Succeed())
		Expect(verifiedReason(settled(after))).To(Equal("False/" + hubv1alpha1.ReasonPodChanged))

		// ... and after it, the new image's digest reported.
		reportImage(pod, evil, 1)
		got = rescore(pod, after, 0.97)
		Expect(verifiedReason(got)).To(Equal("False/" + hubv1alpha1.ReasonPodChanged))
		Expect(got.Status.Provenance).To(BeNil())

		// What the first image wrote before the swap stays verified, with its digest.
		kept := settled(untouched)
		Expect(verifiedReason(kept)).To(Equal("True/" + hubv1alpha1.ReasonRunVerified))
		Expect(kept.Status.Provenance.Images[0].Digest()).To(Equal(digest))
		Eventually(func(g Gomega) {
			rows := publicRows(lb)
			g.Expect(rows).To(HaveLen(3))
			for id, r := range rows {
				g.Expect(r.Verified).To(Equal(id == hubv1alpha1.ID(kept)), "row %s", id)
				if id != hubv1alpha1.ID(kept) {
					g.Expect(r.Provenance).To(BeNil())
				}
			}
		}).Should(Succeed())
	})

	It("does not verify values its Pod writes after an ephemeral container was added", func() {
		ns := newOrg()
		alice := newMember(ns, "alice")
		Expect(k8sClient.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "debug"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods/ephemeralcontainers"}, Verbs: []string{"get", "update", "patch"}}},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alice-debug"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "debug"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: alice.Name, Namespace: ns}},
		})).To(Succeed())
		lb := newBoard(ns, "main", "")
		pod := runJob(alice, "eval")

		// The attack: an ephemeral container of another image shares the Pod's
		// volumes, its ServiceAccount token among them.
		Eventually(func(g Gomega) {
			cur := &corev1.Pod{}
			g.Expect(alice.C.Get(ctx, client.ObjectKeyFromObject(pod), cur)).To(Succeed())
			cur.Spec.EphemeralContainers = append(cur.Spec.EphemeralContainers, corev1.EphemeralContainer{
				EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "evil.example/other:1"},
			})
			g.Expect(alice.C.SubResource("ephemeralcontainers").Update(ctx, cur)).To(Succeed())
		}).Should(Succeed())

		row := rowOf(lb, "run-result", 0.99)
		Expect(inPod(pod).Create(ctx, row)).To(Succeed())
		got := settled(row)
		Expect(verifiedReason(got)).To(Equal("False/" + hubv1alpha1.ReasonPodChanged))
		Expect(got.Status.Provenance).To(BeNil())
	})

	It("verifies values a run writes while its Pod terminates (a deletion is no change of what runs)", func() {
		ns := newOrg()
		alice := newMember(ns, "alice")
		lb := newBoard(ns, "main", "")
		pod := runJob(alice, "eval")
		// Bound to a node (there is no scheduler), the Pod is deleted gracefully: it keeps
		// running until its grace period ends, and its generation is raised by one.
		Expect(k8sClient.SubResource("binding").Create(ctx, pod, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod.Name},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
		})).To(Succeed())
		Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(300))).To(Succeed())
		cur := &corev1.Pod{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), cur)).To(Succeed())
		Expect(cur.DeletionTimestamp).NotTo(BeNil())
		Expect(cur.Generation).To(Equal(int64(2)))

		row := rowOf(lb, "last-words", 0.7)
		Expect(inPod(pod).Create(ctx, row)).To(Succeed())
		got := settled(row)
		Expect(verifiedReason(got)).To(Equal("True/" + hubv1alpha1.ReasonRunVerified))
		Expect(got.Status.Provenance.Images[0].Digest()).To(Equal(digest))
		Expect(got.Status.Provenance.Generation).To(Equal(got.Generation))
	})
})
