package controllers_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

var _ = Describe("The samples in config/samples", func() {
	It("apply with kubectl -k and come up as documented", func() {
		kubectl, err := testenv.Kubectl()
		Expect(err).NotTo(HaveOccurred())
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(testenv.AdminKubeconfig(testEnv, nil, "samples-admin", kubeconfig)).To(Succeed())
		run := func(args ...string) string {
			GinkgoHelper()
			out, err := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
			return string(out)
		}

		samples := filepath.Join(testenv.RepoRoot(), "config", "samples")
		run("apply", "-k", samples)

		public := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "terminal-bench-main"}}
		private := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "terminal-bench-nightly"}}
		readyBoard(public)
		Expect(public.Status.DatasetVersionIDs).To(Equal([]string{"c47d2e90-5f81-4b3a-a6c2-7e8f9d0a1b23"}), "latest is 2.0")
		readyBoard(private)
		Expect(private.Status.DatasetVersionIDs).To(HaveLen(3))
		Expect(private.Spec.Visibility).To(Equal(hubv1alpha1.VisibilityPrivate))

		invalid := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "main-broken-upload"}}
		validity(invalid, metav1.ConditionFalse, hubv1alpha1.ReasonValuesInvalid)
		Expect(invalid.Status.InvalidFields).To(Equal([]hubv1alpha1.FieldError{{Field: "metrics.reward", Message: "must be a number"}}))

		By("ranking ten of the twelve rows, ties sharing a rank and the missing cost last among its equals")
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(public), public)).To(Succeed())
			g.Expect(public.Status.Rows).To(Equal(int32(12)))
			g.Expect(public.Status.RankedRows).To(Equal(int32(10)))
			b := rankings.Board(public.UID)
			g.Expect(b).NotTo(BeNil())
			var ranks []int
			var names []string
			for _, e := range b.Page(0, 20) {
				ranks = append(ranks, e.Rank)
				names = append(names, e.Row.Name)
			}
			g.Expect(ranks).To(Equal([]int{1, 2, 3, 3, 5, 5, 7, 8, 9, 10}))
			g.Expect(names[0]).To(Equal("main-opus-terminus"))
			g.Expect(names[1]).To(Equal("main-openhands-sonnet"), "cost breaks the 0.78 tie")
			g.Expect(names[6:8]).To(Equal([]string{"main-goose-kimi", "main-goose-qwen"}), "no cost goes last")
		}).Should(Succeed())

		By("showing the print columns through short names and the podium category")
		out := run("get", "lb,lbrow", "-n", "demo")
		Expect(out).To(MatchRegexp(`(?m)^NAME\s+PACKAGE\s+BOARD\s+VISIBILITY\s+ROWS\s+READY\s+AGE`))
		Expect(out).To(MatchRegexp(`(?m)^leaderboard.hub.podium.dev/terminal-bench-main\s+demo/terminal-bench\s+main\s+public\s+12\s+True`))
		Expect(out).To(MatchRegexp(`(?m)^NAME\s+BOARD\s+VISIBILITY\s+VALID\s+AGE`))
		Expect(out).To(MatchRegexp(`(?m)^leaderboardrow.hub.podium.dev/main-broken-upload\s+terminal-bench-main\s+display\s+False`))
		Expect(run("get", "podium", "-n", "demo")).To(ContainSubstring("dataset.hub.podium.dev/terminal-bench"))

		By("listing the dataset by its short name")
		Expect(run("get", "dset", "-n", "demo")).To(MatchRegexp(`(?m)^terminal-bench\s+demo/terminal-bench\s+True`))

		By("applying the samples again, which changes nothing (a GitOps tool sees no drift)")
		again := strings.Split(strings.TrimSpace(run("apply", "-k", samples)), "\n")
		Expect(again).To(HaveLen(countObjects(samples)), "one line per object")
		for _, line := range again {
			Expect(line).To(HaveSuffix(" unchanged"))
		}
		noDiff := func(args ...string) {
			GinkgoHelper()
			diff := exec.Command(kubectl, append([]string{"--kubeconfig", kubeconfig, "diff", "-k", samples}, args...)...)
			out, err := diff.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "kubectl diff exits 1 on a difference:\n%s", out)
			Expect(string(out)).To(BeEmpty())
		}
		noDiff()

		By("taking the samples over with server-side apply as a GitOps tool does: no conflict with the controllers, no diff after")
		for _, line := range strings.Split(strings.TrimSpace(run("apply", "--server-side", "--field-manager=argocd-controller", "-k", samples)), "\n") {
			Expect(line).To(HaveSuffix(" serverside-applied"))
		}
		noDiff("--server-side", "--field-manager=argocd-controller")

		By("explaining every field")
		Expect(run("explain", "leaderboard.spec.rankBy.nulls")).To(ContainSubstring("places rows without a value first or last"))
		Expect(run("explain", "lbrow.spec.visibility")).To(ContainSubstring("the row's status"))
	})
})

// countObjects counts the objects of a kustomization (the documents of its resources).
func countObjects(dir string) int {
	GinkgoHelper()
	k := struct {
		Resources []string `json:"resources"`
	}{}
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.Unmarshal(b, &k)).To(Succeed())
	n := 0
	for _, r := range k.Resources {
		b, err := os.ReadFile(filepath.Join(dir, r))
		Expect(err).NotTo(HaveOccurred())
		for _, doc := range strings.Split("\n"+string(b), "\n---") {
			if strings.Contains(doc, "\nkind:") {
				n++
			}
		}
	}
	return n
}
