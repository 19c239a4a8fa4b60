package controllers_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// expectInvalid asserts the apiserver refused an object as invalid, naming the field.
func expectInvalid(err error, fragments ...string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	for _, f := range fragments {
		Expect(err.Error()).To(ContainSubstring(f))
	}
}

const uuid1 = "0b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51"

var _ = Describe("The Leaderboard CRD", func() {
	DescribeTable("refuses a malformed board, naming the field",
		func(mutate func(*hubv1alpha1.Leaderboard), fragments ...string) {
			ns := newNamespace("crd-lb")
			lb := board(ns, "b", "ds")
			mutate(lb)
			expectInvalid(k8sClient.Create(ctx, lb), fragments...)
		},
		Entry("name of 101 characters", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Name = strings.Repeat("a", 101) }, "spec.name", "100"),
		Entry("empty name", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Name = "" }, "spec.name"),
		Entry("name with an upper-case letter", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Name = "Board" }, "spec.name", "should match"),
		Entry("name starting with a dot", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Name = ".board" }, "spec.name", "should match"),
		Entry("name with a slash", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Name = "a/b" }, "spec.name"),
		Entry("empty title", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Title = "" }, "spec.title"),
		Entry("title of 201 characters", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Title = strings.Repeat("t", 201) }, "spec.title", "200"),
		Entry("description of 5,001 characters", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Description = ptr.To(strings.Repeat("d", 5001)) }, "spec.description", "5000"),
		Entry("unknown visibility", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Visibility = "secret" }, "spec.visibility", `"public", "private"`),
		Entry("both package and packageID", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.PackageID = uuid1 }, "spec", "exactly one of package or packageID must be set"),
		Entry("neither package nor packageID", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Package = "" }, "exactly one of package or packageID must be set"),
		Entry("package without a slash", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Package = "dataset" }, "spec.package", "should match"),
		Entry("packageID that is no UUID", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Package, lb.Spec.PackageID = "", "not-a-uuid" }, "spec.packageID", "should match"),
		Entry("duplicate column ids", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Columns[1].ID = lb.Spec.Columns[0].ID }, "spec.columns[1]", "Duplicate value"),
		Entry("column id starting with a dash", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Columns[0].ID = "-agent" }, "spec.columns[0].id", "should match"),
		Entry("empty column header", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Columns[0].Header = "" }, "spec.columns[0].header"),
		Entry("column accessor outside metadata and metrics", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Columns[0].Accessor = "spec.agent" }, "spec.columns[0].accessor", "should match"),
		Entry("column accessor with only a root", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Columns[0].Accessor = "metrics." }, "spec.columns[0].accessor"),
		Entry("unknown column type", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Columns[0].Type = "float" }, "spec.columns[0].type", "supported values"),
		Entry("missing column type", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Columns[0].Type = "" }, "spec.columns[0].type"),
		Entry("bad display accessor", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Columns[0].DisplayAccessor = "agent" }, "spec.columns[0].displayAccessor"),
		Entry("unknown display type", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Columns[0].DisplayType = "html" }, "spec.columns[0].displayType"),
		Entry("unknown align", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.Columns[0].Align = "middle" }, "spec.columns[0].align"),
		Entry("rank accessor outside metadata and metrics", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.RankBy[0].Accessor = "reward" }, "spec.rankBy[0].accessor"),
		Entry("unknown rank direction", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.RankBy[0].Direction = "up" }, "spec.rankBy[0].direction", `"asc", "desc"`),
		Entry("missing rank direction", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.RankBy[0].Direction = "" }, "spec.rankBy[0].direction"),
		Entry("unknown nulls placement", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.RankBy[0].Nulls = "middle" }, "spec.rankBy[0].nulls", `"first", "last"`),
		Entry("version id that is no UUID", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.DatasetVersionIDs = &[]string{"v1"} }, "spec.datasetVersionIDs[0]"),
		Entry("empty version ref", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.DatasetVersionRefs = &[]string{""} }, "spec.datasetVersionRefs[0]"),
		Entry("metrics schema that is no object", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.MetricsSchema = raw("number") }, "spec.metricsSchema"),
	)

	It("accepts the edge values and defaults visibility to private", func() {
		ns := newNamespace("crd-lb-edge")
		lb := board(ns, "edge", "ds")
		lb.Spec.Name = "0" + strings.Repeat("a._-", 24) + "xyz"
		Expect(lb.Spec.Name).To(HaveLen(100))
		lb.Spec.Title = strings.Repeat("t", 200)
		lb.Spec.Description = ptr.To(strings.Repeat("d", 5000))
		lb.Spec.Columns[0].ID = "_a.b-c"
		lb.Spec.Columns[0].DisplayAccessor = "metadata.agent.name"
		lb.Spec.Columns[0].DisplayType = hubv1alpha1.ColumnLink
		lb.Spec.Columns[0].Align = "center"
		lb.Spec.RankBy[0].Nulls = hubv1alpha1.NullsFirst
		lb.Spec.DatasetVersionRefs = &[]string{"latest"}
		lb.Spec.DatasetVersionIDs = &[]string{strings.ToUpper(uuid1)}
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())
		Expect(lb.Spec.Visibility).To(Equal(hubv1alpha1.VisibilityPrivate))

		minimal := &hubv1alpha1.Leaderboard{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "minimal"},
			Spec:       hubv1alpha1.LeaderboardSpec{PackageID: uuid1, Name: "m", Title: "t"},
		}
		Expect(k8sClient.Create(ctx, minimal)).To(Succeed())
	})

	It("keeps package, packageID and name immutable", func() {
		ns := newNamespace("crd-lb-immutable")
		lb := board(ns, "b", "ds")
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())

		// Merge patches carry no resourceVersion: the controller may write status
		// meanwhile, and only validation may refuse them.
		changed := lb.DeepCopy()
		changed.Spec.Name = "other"
		expectInvalid(k8sClient.Patch(ctx, changed, client.MergeFrom(lb)), "spec.name", "name is immutable")

		changed = lb.DeepCopy()
		changed.Spec.Package = ns + "/other"
		expectInvalid(k8sClient.Patch(ctx, changed, client.MergeFrom(lb)), "spec.package", "package is immutable")

		changed = lb.DeepCopy()
		changed.Spec.Package, changed.Spec.PackageID = "", uuid1
		expectInvalid(k8sClient.Patch(ctx, changed, client.MergeFrom(lb)), "package and packageID are immutable")

		byID := &hubv1alpha1.Leaderboard{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-id"},
			Spec:       hubv1alpha1.LeaderboardSpec{PackageID: uuid1, Name: "by-id", Title: "t"},
		}
		Expect(k8sClient.Create(ctx, byID)).To(Succeed())
		changedID := byID.DeepCopy()
		changedID.Spec.PackageID = "9b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51"
		expectInvalid(k8sClient.Patch(ctx, changedID, client.MergeFrom(byID)), "spec.packageID", "packageID is immutable")

		changed = lb.DeepCopy()
		changed.Spec.Title = "A new title"
		Expect(k8sClient.Patch(ctx, changed, client.MergeFrom(lb))).To(Succeed(), "other fields may change")
	})
})

var _ = Describe("The LeaderboardRow CRD", func() {
	DescribeTable("refuses a malformed row, naming the field",
		func(mutate func(*hubv1alpha1.LeaderboardRow), fragments ...string) {
			ns := newNamespace("crd-row")
			r := row(ns, "r", "b", map[string]any{"reward": 1})
			mutate(r)
			expectInvalid(k8sClient.Create(ctx, r), fragments...)
		},
		Entry("unknown visibility", func(r *hubv1alpha1.LeaderboardRow) { r.Spec.Visibility = "shown" }, "spec.visibility", `"display", "hide"`),
		Entry("duplicate trial ids", func(r *hubv1alpha1.LeaderboardRow) { r.Spec.TrialIDs = []string{uuid1, uuid1} }, "spec.trialIDs[1]", "Duplicate value"),
		Entry("trial id that is no UUID", func(r *hubv1alpha1.LeaderboardRow) { r.Spec.TrialIDs = []string{"trial-1"} }, "spec.trialIDs[0]", "should match"),
		Entry("no leaderboard", func(r *hubv1alpha1.LeaderboardRow) { r.Spec.Leaderboard = "" }, "spec.leaderboard"),
		Entry("leaderboard that is no object name", func(r *hubv1alpha1.LeaderboardRow) { r.Spec.Leaderboard = "My_Board" }, "spec.leaderboard", "should match"),
		Entry("metrics that are no object", func(r *hubv1alpha1.LeaderboardRow) { r.Spec.Metrics = raw([]int{1}) }, "spec.metrics"),
		Entry("metadata that is no object", func(r *hubv1alpha1.LeaderboardRow) { r.Spec.Metadata = raw("agent") }, "spec.metadata"),
	)

	It("defaults visibility to display and keeps the leaderboard immutable", func() {
		ns := newNamespace("crd-row-edge")
		r := row(ns, "r", "b", map[string]any{"reward": 1})
		r.Spec.TrialIDs = []string{uuid1, strings.ToUpper("9b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51")}
		Expect(k8sClient.Create(ctx, r)).To(Succeed())
		Expect(r.Spec.Visibility).To(Equal(hubv1alpha1.RowDisplay))

		changed := r.DeepCopy()
		changed.Spec.Leaderboard = "other"
		expectInvalid(k8sClient.Patch(ctx, changed, client.MergeFrom(r)), "spec.leaderboard", "leaderboard is immutable")
	})
})

var _ = Describe("The Dataset CRD", func() {
	DescribeTable("refuses a malformed dataset, naming the field",
		func(mutate func(*hubv1alpha1.Dataset), fragments ...string) {
			ns := newNamespace("crd-ds")
			ds := dataset(ns, "ds")
			mutate(ds)
			expectInvalid(k8sClient.Create(ctx, ds), fragments...)
		},
		Entry("version id that is no UUID", func(ds *hubv1alpha1.Dataset) { ds.Spec.Versions[0].ID = "v1" }, "spec.versions[0].id", "should match"),
		Entry("duplicate version ids", func(ds *hubv1alpha1.Dataset) { ds.Spec.Versions[1].ID = ds.Spec.Versions[0].ID }, "spec.versions[1]", "Duplicate value"),
		Entry("duplicate tags", func(ds *hubv1alpha1.Dataset) { ds.Spec.Versions[1].Tag = ds.Spec.Versions[0].Tag }, "versions: every tag must be unique"),
		Entry("the reserved tag latest", func(ds *hubv1alpha1.Dataset) { ds.Spec.Versions[0].Tag = "latest" }, "spec.versions[0].tag", "tag 'latest' is reserved"),
		Entry("empty tag", func(ds *hubv1alpha1.Dataset) { ds.Spec.Versions[0].Tag = "" }, "spec.versions[0].tag"),
		Entry("bad env var name", func(ds *hubv1alpha1.Dataset) {
			ds.Spec.Versions[0].Tasks = []hubv1alpha1.DatasetTask{{Name: "t", RequiredEnv: []hubv1alpha1.TaskEnvVar{{Name: "1TOKEN"}}}}
		}, "spec.versions[0].tasks[0].requiredEnv[0].name"),
		Entry("unknown task phase", func(ds *hubv1alpha1.Dataset) {
			ds.Spec.Versions[0].Tasks = []hubv1alpha1.DatasetTask{{Name: "t", RequiredEnv: []hubv1alpha1.TaskEnvVar{{Name: "TOKEN", Phase: "later"}}}}
		}, "spec.versions[0].tasks[0].requiredEnv[0].phase"),
	)

	It("accepts a dataset without versions", func() {
		ns := newNamespace("crd-ds-empty")
		ds := &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "empty"}}
		Expect(k8sClient.Create(ctx, ds)).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ds), ds)).To(Succeed())
	})
})
