package controllers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// rowsOf lists the rows labelled as the board objName's.
func rowsOf(g Gomega, ns, objName string) []hubv1alpha1.LeaderboardRow {
	list := &hubv1alpha1.LeaderboardRowList{}
	g.Expect(k8sClient.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{hubv1alpha1.LabelLeaderboard: objName})).To(Succeed())
	return list.Items
}

var _ = Describe("Deleting, with kube-controller-manager's garbage collector running as in a cluster", func() {
	It("takes a board's rows with it, and a board re-created under the name starts empty", func() {
		ns := newNamespace("gc")
		Expect(k8sClient.Create(ctx, dataset(ns, "ds"))).To(Succeed())
		lb := board(ns, "board", "ds")
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		readyBoard(lb)
		for _, name := range []string{"a", "b", "c"} {
			Expect(k8sClient.Create(ctx, row(ns, name, "board", map[string]any{"reward": 0.5}))).To(Succeed())
		}
		Eventually(func(g Gomega) {
			g.Expect(rowsOf(g, ns, "board")).To(HaveLen(3))
			for _, r := range rowsOf(g, ns, "board") {
				g.Expect(r.OwnerReferences).To(HaveLen(1), "owned by the board")
			}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
			g.Expect(lb.Status.Rows).To(Equal(int32(3)))
		}).Should(Succeed())

		Expect(k8sClient.Delete(ctx, lb)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(rowsOf(g, ns, "board")).To(BeEmpty())
		}).WithTimeout(60 * time.Second).Should(Succeed())

		again := board(ns, "board", "ds")
		Expect(k8sClient.Create(ctx, again)).To(Succeed())
		readyBoard(again)
		Expect(again.Status.Rows).To(BeZero())
		Consistently(func(g Gomega) {
			g.Expect(rowsOf(g, ns, "board")).To(BeEmpty())
		}).WithTimeout(2 * time.Second).Should(Succeed())
	})

	It("empties and removes a deleted namespace", func() {
		ns := newNamespace("gc-ns")
		Expect(k8sClient.Create(ctx, dataset(ns, "ds"))).To(Succeed())
		lb := board(ns, "board", "ds")
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		Expect(k8sClient.Create(ctx, row(ns, "a", "board", map[string]any{"reward": 0.5}))).To(Succeed())
		readyBoard(lb)

		Expect(k8sClient.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Eventually(func(g Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "namespace still there: %v", err)
		}).WithTimeout(90 * time.Second).Should(Succeed())
		Expect(rowsOf(Default, ns, "board")).To(BeEmpty())
	})
})
