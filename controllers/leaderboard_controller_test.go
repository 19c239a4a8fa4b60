package controllers_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// readyBoard waits until the board is Ready and returns it fresh.
func readyBoard(lb *hubv1alpha1.Leaderboard) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		c := ready(g, lb)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
	}).Should(Succeed())
}

// notReady waits until the board reports Ready False with reason and a message
// holding every fragment.
func notReady(lb *hubv1alpha1.Leaderboard, reason string, fragments ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		c := ready(g, lb)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(reason), c.Message)
		for _, f := range fragments {
			g.Expect(c.Message).To(ContainSubstring(f))
		}
	}).Should(Succeed())
}

var _ = Describe("The Leaderboard controller", func() {
	var ns string
	BeforeEach(func() {
		ns = newNamespace("lb")
		Expect(k8sClient.Create(ctx, dataset(ns, "ds"))).To(Succeed())
	})

	withVersions := func(name string, refs, ids *[]string) *hubv1alpha1.Leaderboard {
		lb := board(ns, name, "ds")
		lb.Spec.DatasetVersionRefs, lb.Spec.DatasetVersionIDs = refs, ids
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		return lb
	}

	It("resolves dataset versions by the rules of docs/leaderboards.md, once", func() {
		all := withVersions("all", nil, nil)
		none := withVersions("none", &[]string{}, &[]string{})
		refs := withVersions("refs", &[]string{"latest", "1.0", "2.0"}, nil)
		mixed := withVersions("mixed", &[]string{"1.1"}, &[]string{v1ID, v2ID})
		onlyIDs := withVersions("only-ids", nil, &[]string{v3ID})

		for _, tc := range []struct {
			lb   *hubv1alpha1.Leaderboard
			want []string
		}{
			{all, []string{v1ID, v2ID, v3ID}}, // rule 1: every version, oldest first
			{none, []string{}},                // rule 2: [] means none
			{refs, []string{v3ID, v1ID}},      // rule 3: latest is the newest; duplicates once
			{mixed, []string{v2ID, v1ID}},     // refs, then ids
			{onlyIDs, []string{v3ID}},         // refs omitted, ids set: only the ids
		} {
			readyBoard(tc.lb)
			Expect(tc.lb.Status.VersionsResolved).To(BeTrue())
			if len(tc.want) == 0 {
				Expect(tc.lb.Status.DatasetVersionIDs).To(BeEmpty(), tc.lb.Name)
			} else {
				Expect(tc.lb.Status.DatasetVersionIDs).To(Equal(tc.want), tc.lb.Name)
			}
			Expect(tc.lb.Status.Package).To(Equal(ns + "/ds"))
		}

		By("publishing a newer version, which no board takes")
		ds := &hubv1alpha1.Dataset{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ds"}, ds)).To(Succeed())
		newer := ds.DeepCopy()
		newer.Spec.Versions = append(newer.Spec.Versions, hubv1alpha1.DatasetVersion{ID: v4ID, Tag: "3.0", CreatedAt: at(30)})
		Expect(k8sClient.Patch(ctx, newer, client.MergeFrom(ds))).To(Succeed())
		Eventually(func(g Gomega) {
			ready(g, ds)
			g.Expect(ds.Status.LatestVersionID).To(Equal(v4ID))
		}).Should(Succeed())
		// A spec change makes the controller reconcile each board after it has seen
		// the new version: what it then reports is its decision, not a lag.
		for _, lb := range []*hubv1alpha1.Leaderboard{all, refs} {
			retitled := lb.DeepCopy()
			retitled.Spec.Title = "Retitled"
			Expect(k8sClient.Patch(ctx, retitled, client.MergeFrom(lb))).To(Succeed())
		}
		readyBoard(all)
		Expect(all.Status.DatasetVersionIDs).To(Equal([]string{v1ID, v2ID, v3ID}))
		readyBoard(refs)
		Expect(refs.Status.DatasetVersionIDs).To(Equal([]string{v3ID, v1ID}), "latest stays what it was at creation")

		By("changing the refs in spec, which resolves them again")
		changed := refs.DeepCopy()
		changed.Spec.DatasetVersionRefs = &[]string{"latest"}
		Expect(k8sClient.Patch(ctx, changed, client.MergeFrom(refs))).To(Succeed())
		Eventually(func(g Gomega) {
			ready(g, refs)
			g.Expect(refs.Status.DatasetVersionIDs).To(Equal([]string{v4ID}))
		}).Should(Succeed())
	})

	It("names an unknown ref or id, and resolves once the version exists", func() {
		lb := withVersions("unknown", &[]string{"9.9"}, &[]string{v4ID})
		notReady(lb, hubv1alpha1.ReasonVersionNotFound, `datasetVersionRefs[0] "9.9"`, `datasetVersionIDs[0] "`+v4ID+`"`)
		Expect(lb.Status.VersionsResolved).To(BeFalse())

		ds := &hubv1alpha1.Dataset{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ds"}, ds)).To(Succeed())
		newer := ds.DeepCopy()
		newer.Spec.Versions = append(newer.Spec.Versions, hubv1alpha1.DatasetVersion{ID: v4ID, Tag: "9.9", CreatedAt: at(30)})
		Expect(k8sClient.Patch(ctx, newer, client.MergeFrom(ds))).To(Succeed())
		readyBoard(lb)
		Expect(lb.Status.DatasetVersionIDs).To(Equal([]string{v4ID}))
	})

	It("labels the board with its id and never writes its spec", func() {
		lb := board(ns, "labelled", "ds")
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		spec := lb.Spec.DeepCopy()
		readyBoard(lb)
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
			g.Expect(lb.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelID, string(lb.UID)))
		}).Should(Succeed())
		Expect(lb.Generation).To(Equal(int64(1)))
		Expect(lb.Spec).To(Equal(*spec))
	})

	It("records in status.updatedAt when the definition changes, and not on label changes", func() {
		lb := board(ns, "edited", "ds")
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		readyBoard(lb)
		created := lb.CreationTimestamp.Time
		Expect(lb.Status.UpdatedAt).NotTo(BeNil())
		Expect(lb.Status.UpdatedAt.Time).To(BeTemporally("==", created), "generation 1 was last changed when created")
		// From here on, a time the controller took from its clock is in a later second.
		time.Sleep(time.Until(created.Add(time.Second)))

		By("changing labels only: the controller puts its own back and leaves updatedAt")
		labelled := lb.DeepCopy()
		labelled.Labels["team"] = "blue"
		delete(labelled.Labels, hubv1alpha1.LabelID)
		Expect(k8sClient.Patch(ctx, labelled, client.MergeFrom(lb))).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
			g.Expect(lb.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelID, string(lb.UID)))
		}).Should(Succeed())
		Expect(lb.Generation).To(Equal(int64(1)))
		Expect(lb.Status.UpdatedAt.Time).To(BeTemporally("==", created))

		By("replacing the spec with a plain Update, as kubectl or a GitOps tool would")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
			lb.Spec.Title = "Edited"
			g.Expect(k8sClient.Update(ctx, lb)).To(Succeed())
		}).Should(Succeed())
		Expect(lb.Generation).To(Equal(int64(2)))
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
			g.Expect(lb.Status.ObservedGeneration).To(Equal(int64(2)))
		}).Should(Succeed())
		// In the status write that observed generation 2, not in one of its own.
		Expect(lb.Status.UpdatedAt.Time).To(BeTemporally(">", created))
		Expect(lb.Status.UpdatedAt.Time).To(BeTemporally("<=", time.Now()))
	})

	It("resolves a packageID to the Dataset of the namespace", func() {
		ds := &hubv1alpha1.Dataset{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ds"}, ds)).To(Succeed())
		lb := board(ns, "by-id", "ds")
		lb.Spec.Package, lb.Spec.PackageID = "", string(ds.UID)
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		readyBoard(lb)
		Expect(lb.Status.Package).To(Equal(ns + "/ds"))
		Expect(lb.Status.PackageID).To(Equal(string(ds.UID)))

		unknown := board(ns, "by-unknown-id", "ds")
		unknown.Spec.Package, unknown.Spec.PackageID = "", uuid1
		Expect(k8sClient.Create(ctx, unknown)).To(Succeed())
		notReady(unknown, hubv1alpha1.ReasonDatasetNotFound, "packageID", uuid1)
	})

	It("refuses a dataset of another organization", func() {
		other := newNamespace("lb-other-org")
		theirs := dataset(other, "theirs")
		Expect(k8sClient.Create(ctx, theirs)).To(Succeed())

		lb := board(ns, "foreign", "ds")
		lb.Spec.Package = other + "/theirs"
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		notReady(lb, hubv1alpha1.ReasonPackageInOtherOrg, other+"/theirs", "another organization")

		byID := board(ns, "foreign-id", "ds")
		byID.Spec.Package, byID.Spec.PackageID = "", string(theirs.UID)
		Expect(k8sClient.Create(ctx, byID)).To(Succeed())
		notReady(byID, hubv1alpha1.ReasonPackageInOtherOrg, other+"/theirs")

		missing := board(ns, "foreign-missing", "ds")
		missing.Spec.Package = other + "/none"
		Expect(k8sClient.Create(ctx, missing)).To(Succeed())
		notReady(missing, hubv1alpha1.ReasonPackageInOtherOrg, other+"/none")
	})

	It("waits for a missing dataset and becomes Ready when it appears", func() {
		lb := board(ns, "early", "later")
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		notReady(lb, hubv1alpha1.ReasonDatasetNotFound, "package", ns+"/later")
		Expect(k8sClient.Create(ctx, dataset(ns, "later"))).To(Succeed())
		readyBoard(lb)
		Expect(lb.Status.DatasetVersionIDs).To(HaveLen(3))
	})

	It("lets the older of two boards with one name keep it", func() {
		first := board(ns, "first", "ds")
		first.Spec.Name = "shared"
		Expect(k8sClient.Create(ctx, first)).To(Succeed())
		readyBoard(first)
		second := board(ns, "second", "ds")
		second.Spec.Name = "shared"
		Expect(k8sClient.Create(ctx, second)).To(Succeed())
		notReady(second, hubv1alpha1.ReasonDuplicateName, `"shared"`, "first")
		readyBoard(first)

		By("deleting the older board, which frees the name")
		Expect(k8sClient.Delete(ctx, first)).To(Succeed())
		readyBoard(second)
	})

	It("names accessors the schemas do not declare, and invalid schemas", func() {
		lb := board(ns, "typo", "ds")
		lb.Spec.Columns = append(lb.Spec.Columns, hubv1alpha1.Column{ID: "cost", Header: "Cost", Accessor: "metrics.cots", DisplayAccessor: "metadata.cost_label", Type: hubv1alpha1.ColumnNumber})
		lb.Spec.RankBy = append(lb.Spec.RankBy, hubv1alpha1.RankRule{Accessor: "metrics.cost", Direction: hubv1alpha1.Ascending})
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		notReady(lb, hubv1alpha1.ReasonUnknownAccessor, `columns[cost].accessor "metrics.cots"`, `columns[cost].displayAccessor "metadata.cost_label"`)
		Expect(ready(Default, lb).Message).NotTo(ContainSubstring("rankBy"), "metrics.cost is declared")

		open := board(ns, "open", "ds")
		open.Spec.MetricsSchema = raw(map[string]any{"type": "object"})
		open.Spec.Columns = lb.Spec.Columns[:1]
		open.Spec.RankBy = []hubv1alpha1.RankRule{{Accessor: "metrics.anything.at.all", Direction: hubv1alpha1.Descending}}
		Expect(k8sClient.Create(ctx, open)).To(Succeed())
		readyBoard(open)

		bad := board(ns, "bad-schema", "ds")
		bad.Spec.MetricsSchema = raw(map[string]any{"type": "object", "properties": map[string]any{"reward": map[string]any{"type": "float"}}})
		Expect(k8sClient.Create(ctx, bad)).To(Succeed())
		notReady(bad, hubv1alpha1.ReasonInvalidSchema, `metricsSchema.properties.reward.type: unknown type "float"`)
	})
})
