package httpapi_test

import (
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// times is what a read serves of one object: its id, metrics and the two times.
type times struct {
	ID        string         `json:"id"`
	Metrics   map[string]any `json:"metrics"`
	CreatedAt string         `json:"created_at"`
	UpdatedAt string         `json:"updated_at"`
}

var _ = Describe("updated_at in the read", func() {
	// readTimes reads the board's first page: the board's times and each row's by name.
	readTimes := func(g Gomega, lb *hubv1alpha1.Leaderboard, names map[string]string) (times, map[string]times) {
		r := read(slugRead(lb, 1, 50), "")
		g.Expect(r.status).To(Equal(200), string(r.body))
		var body struct {
			Leaderboard times   `json:"leaderboard"`
			Rows        []times `json:"rows"`
		}
		g.Expect(json.Unmarshal(r.body, &body)).To(Succeed())
		rows := map[string]times{}
		for _, row := range body.Rows {
			rows[names[row.ID]] = row
		}
		return body.Leaderboard, rows
	}

	It("moves when a client such as kubectl replaces a row's spec, not on label or status writes", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		kept, edited := newRow(lb, "kept", 1), newRow(lb, "edited", 2)
		names := map[string]string{string(kept.UID): "kept", string(edited.UID): "edited"}
		var board0 times
		Eventually(func(g Gomega) {
			var rows map[string]times
			board0, rows = readTimes(g, lb, names)
			g.Expect(rows).To(HaveLen(2))
			for _, t := range append([]times{board0}, rows["kept"], rows["edited"]) {
				g.Expect(t.UpdatedAt).To(Equal(t.CreatedAt), "never changed since its creation")
			}
		}).Should(Succeed())
		// From here on, a time the controllers take from their clock is in a later second.
		latest := lb.CreationTimestamp.Time
		for _, o := range []metav1.Object{kept, edited} {
			if c := o.GetCreationTimestamp().Time; c.After(latest) {
				latest = c
			}
		}
		time.Sleep(time.Until(latest.Add(time.Second)))

		By("writing labels on the board and the kept row, and a condition of its own on the kept row's status")
		for _, o := range []client.Object{&hubv1alpha1.Leaderboard{}, &hubv1alpha1.LeaderboardRow{}} {
			key := client.ObjectKeyFromObject(lb)
			if _, ok := o.(*hubv1alpha1.LeaderboardRow); ok {
				key = client.ObjectKeyFromObject(kept)
			}
			Expect(k8sClient.Get(ctx, key, o)).To(Succeed())
			base := o.DeepCopyObject().(client.Object)
			labels := o.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels["team"] = "blue"
			o.SetLabels(labels)
			Expect(k8sClient.Patch(ctx, o, client.MergeFrom(base))).To(Succeed())
		}
		row := &hubv1alpha1.LeaderboardRow{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kept), row)).To(Succeed())
		base := row.DeepCopy()
		row.Status.Conditions = append(row.Status.Conditions, metav1.Condition{
			Type: "Reviewed", Status: metav1.ConditionTrue, Reason: "Reviewed", Message: "checked by hand",
			LastTransitionTime: metav1.Now(),
		})
		Expect(k8sClient.Status().Patch(ctx, row, client.MergeFrom(base))).To(Succeed())

		By("replacing the other row's spec with a plain Update, without the CLI's annotation")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(edited), row)).To(Succeed())
			row.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(`{"score": 3}`)}
			g.Expect(k8sClient.Update(ctx, row)).To(Succeed())
		}).Should(Succeed())
		Expect(row.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationUpdatedAt))

		// The cache sees the writes in order: once it serves the new metrics, it has
		// seen the label and status writes before them.
		Eventually(func(g Gomega) {
			board, rows := readTimes(g, lb, names)
			g.Expect(rows["edited"].Metrics).To(Equal(map[string]any{"score": 3.0}))
			g.Expect(board.UpdatedAt).To(Equal(board0.UpdatedAt), "the board's labels and status changed, not its definition")
			g.Expect(rows["kept"].UpdatedAt).To(Equal(rows["kept"].CreatedAt), "the row's labels and status changed, not its values")
			created, err := time.Parse(time.RFC3339, rows["edited"].CreatedAt)
			g.Expect(err).NotTo(HaveOccurred())
			updated, err := time.Parse(time.RFC3339, rows["edited"].UpdatedAt)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(updated).To(BeTemporally(">", created))
			g.Expect(updated).To(BeTemporally("<=", time.Now()))
		}).Should(Succeed())
	})

	It("serves the CLI's annotation when it is newer than the last spec change", func() {
		ns := newOrg()
		lb := newBoard(ns, hubv1alpha1.VisibilityPublic)
		r := newRow(lb, "stamped", 1)
		names := map[string]string{string(r.UID): "stamped"}
		stamp := time.Now().UTC().Add(time.Hour).Truncate(time.Second).Format(time.RFC3339)
		row := &hubv1alpha1.LeaderboardRow{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), row)).To(Succeed())
		base := row.DeepCopy()
		row.Annotations = map[string]string{hubv1alpha1.AnnotationUpdatedAt: stamp}
		Expect(k8sClient.Patch(ctx, row, client.MergeFrom(base))).To(Succeed())
		Eventually(func(g Gomega) {
			_, rows := readTimes(g, lb, names)
			g.Expect(rows["stamped"].UpdatedAt).To(Equal(stamp))
		}).Should(Succeed())
	})
})
