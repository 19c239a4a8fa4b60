package httpapi_test

import (
	"encoding/json"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// edit changes a board, retrying on the conflicts its controller's status writes cause.
func edit(lb *hubv1alpha1.Leaderboard, change func()) {
	GinkgoHelper()
	Eventually(func() error {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb); err != nil {
			return err
		}
		change()
		return k8sClient.Update(ctx, lb)
	}).Should(Succeed())
}

var _ = Describe("Who created a row", func() {
	It("is recorded at admission, cannot be forged or changed, and is served to those who may see it", func() {
		ns := newOrg()
		token := memberToken(ns, "podium-org-owner")
		owner, err := testenv.ClientAs(cfg, token)
		Expect(err).NotTo(HaveOccurred())
		ownerName := "system:serviceaccount:" + ns + ":runner"

		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		row := &hubv1alpha1.LeaderboardRow{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r1",
				Annotations: map[string]string{hubv1alpha1.AnnotationCreatedBy: "somebody-else"}},
			Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: lb.Name, Metrics: &apiextensionsv1.JSON{Raw: []byte(`{"score":1}`)}},
		}
		Expect(owner.Create(ctx, row)).To(Succeed())
		Expect(row.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedBy, ownerName), "a forged creator is replaced")

		By("an update by someone else, even one that tries to change it, keeps the creator")
		got := &hubv1alpha1.LeaderboardRow{}
		Eventually(func() error { // the row controller writes labels meanwhile: retry on conflict
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(row), got); err != nil {
				return err
			}
			got.Annotations[hubv1alpha1.AnnotationCreatedBy] = "rewritten"
			got.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(`{"score":2}`)}
			return k8sClient.Update(ctx, got)
		}).Should(Succeed())
		Expect(got.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedBy, ownerName))

		createdBy := func(lb *hubv1alpha1.Leaderboard, token string) any {
			var out any
			eventually(func(g Gomega) {
				r := read(slugRead(lb, 1, 50), token)
				g.Expect(r.status).To(Equal(http.StatusOK), string(r.body))
				var body struct {
					Rows []map[string]any `json:"rows"`
				}
				g.Expect(json.Unmarshal(r.body, &body)).To(Succeed())
				g.Expect(body.Rows).To(HaveLen(1))
				g.Expect(body.Rows[0]).To(HaveKey("created_by"))
				g.Expect(body.Rows[0]["metrics"]).To(HaveKeyWithValue("score", 2.0))
				out = body.Rows[0]["created_by"]
			})
			return out
		}
		By("a public board does not show it unless it opts in")
		Expect(createdBy(lb, "")).To(BeNil())
		edit(lb, func() { lb.Spec.ShowAuthors = true })
		eventually(func(g Gomega) { g.Expect(createdBy(lb, "")).To(Equal(ownerName)) })

		By("a private board shows it to the members who may read it")
		edit(lb, func() { lb.Spec.ShowAuthors, lb.Spec.Visibility = false, hubv1alpha1.VisibilityPrivate })
		eventually(func(g Gomega) { g.Expect(createdBy(lb, token)).To(Equal(ownerName)) })
	})
})
