package provenance_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
	"podium.dev/podium/internal/wire"
)

const (
	jobID   = "2d5c8f0a-6b1e-4f3a-9c7d-8e1f2a3b4c5d"
	digest  = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	version = "0b7c1f2e-3a4d-4e5f-8a9b-0c1d2e3f4a5b"
)

// runSubmitterRole lets a person create Pods and Jobs (what a platform team grants; the
// org roles are about Podium's own kinds).
func runSubmitterRole() *rbacv1.ClusterRole {
	verbs := []string{"get", "list", "create", "update", "patch", "delete"}
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "test-run-submitter"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: verbs},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: verbs},
		},
	}
}

// member is an org owner (who may write rows) who submits runs: a ServiceAccount (the runs run as it).
type member struct {
	NS, Name, User string
	C              client.Client
}

func newOrg() string {
	return ginkgoenv.CreateNamespace(ctx, k8sClient, "org").Name
}

func newMember(ns, name string) member {
	token := ginkgoenv.ServiceAccountToken(ctx, clientset, ns, name, "podium-org-owner")
	Expect(testenv.BindClusterRole(ctx, clientset, ns, name+"-runs", "test-run-submitter", ns, name)).To(Succeed())
	m := member{NS: ns, Name: name, User: "system:serviceaccount:" + ns + ":" + name, C: clientAs(token)}
	// A new RoleBinding reaches the authorizer a moment after it is created.
	Eventually(func(g Gomega) {
		for _, res := range []struct{ group, resource string }{{"batch", "jobs"}, {"", "pods"}, {"hub.podium.dev", "leaderboardrows"}} {
			r := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: m.User, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create", Group: res.group, Resource: res.resource},
			}}
			g.Expect(k8sClient.Create(ctx, r)).To(Succeed())
			g.Expect(r.Status.Allowed).To(BeTrue(), "%s may not create %s yet", name, res.resource)
		}
	}).Should(Succeed())
	return m
}

func clientAs(token string) client.Client {
	cl, err := testenv.ClientAs(suite.Config, token)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return cl
}

// inPod is a client acting with a token bound to pod, as the Pod's containers get
// (its projected ServiceAccount token).
func inPod(pod *corev1.Pod) client.Client {
	tr, err := clientset.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, pod.Spec.ServiceAccountName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID,
		}},
	}, metav1.CreateOptions{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return clientAs(tr.Status.Token)
}

// newBoard creates a public board "main" of dataset "ds" in ns, ranked by score.
func newBoard(ns, name string, submissions hubv1alpha1.Submissions) *hubv1alpha1.Leaderboard {
	if err := k8sClient.Create(ctx, &hubv1alpha1.Dataset{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ds"},
		Spec: hubv1alpha1.DatasetSpec{Versions: []hubv1alpha1.DatasetVersion{{
			ID: version, Tag: "1", CreatedAt: metav1.Now(),
		}}},
	}); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package: ns + "/ds", Name: name, Title: "Main", Visibility: hubv1alpha1.VisibilityPublic,
			Submissions:   submissions,
			MetricsSchema: &apiextensionsv1.JSON{Raw: []byte(`{"type":"object","properties":{"score":{"type":"number"}}}`)},
			RankBy:        []hubv1alpha1.RankRule{{Accessor: "metrics.score", Direction: hubv1alpha1.Descending}},
		},
	}
	Expect(k8sClient.Create(ctx, lb)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(lb.Status.Conditions, hubv1alpha1.ConditionReady)).To(BeTrue())
	}).Should(Succeed())
	return lb
}

func rowOf(lb *hubv1alpha1.Leaderboard, name string, score float64) *hubv1alpha1.LeaderboardRow {
	return &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Namespace: lb.Namespace, Name: name},
		Spec: hubv1alpha1.LeaderboardRowSpec{
			Leaderboard: lb.Name,
			Metrics:     &apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf(`{"score":%v}`, score))},
		},
	}
}

// runJob submits, as m, a Job that asks for a hosted secret (so Podium's admission
// sees it) and returns its Pod once the Job controller made it, with its container
// reported started by the kubelet.
func runJob(m member, name string) *corev1.Pod {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: m.NS, Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
				hubv1alpha1.AnnotationSecrets: "EVAL_KEY",
				hubv1alpha1.AnnotationJobID:   jobID,
			}},
			Spec: corev1.PodSpec{
				ServiceAccountName: m.Name,
				RestartPolicy:      corev1.RestartPolicyNever,
				Containers:         []corev1.Container{{Name: "eval", Image: "registry.example/eval:1"}},
			},
		}},
	}
	Expect(m.C.Create(ctx, job)).To(Succeed())
	pod := &corev1.Pod{}
	Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(k8sClient.List(ctx, pods, client.InNamespace(m.NS), client.MatchingLabels{"batch.kubernetes.io/job-name": name})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
		*pod = pods.Items[0]
	}).Should(Succeed())
	Expect(pod.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, m.User))
	return started(pod)
}

// started reports pod's containers running, as the kubelet does.
func started(pod *corev1.Pod) *corev1.Pod {
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "registry.example/eval@" + digest, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	out, err := clientset.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return out
}

// settled waits until the row's status describes its current generation (with a
// Verified condition when a Pod wrote it) and returns the row.
func settled(row *hubv1alpha1.LeaderboardRow) *hubv1alpha1.LeaderboardRow {
	got := &hubv1alpha1.LeaderboardRow{}
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(row), got)).To(Succeed())
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		if got.Annotations[hubv1alpha1.AnnotationWriterPodUID] != "" {
			c := meta.FindStatusCondition(got.Status.Conditions, hubv1alpha1.ConditionVerified)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.ObservedGeneration).To(Equal(got.Generation))
			g.Expect(c.Status).NotTo(Equal(metav1.ConditionUnknown))
		}
	}).Should(Succeed())
	return got
}

func verifiedReason(row *hubv1alpha1.LeaderboardRow) string {
	c := meta.FindStatusCondition(row.Status.Conditions, hubv1alpha1.ConditionVerified)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

// publicRows is the public read of board lb (anonymous GET), rows by id.
func publicRows(lb *hubv1alpha1.Leaderboard) map[string]wire.Row {
	resp, err := http.Get(op.BaseURL + "/v1/leaderboards/" + lb.Namespace + "/ds/" + lb.Spec.Name)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, resp.StatusCode).To(Equal(http.StatusOK), string(body))
	var out struct{ Rows []wire.Row }
	ExpectWithOffset(1, json.Unmarshal(body, &out)).To(Succeed())
	m := map[string]wire.Row{}
	for _, r := range out.Rows {
		m[r.ID] = r
	}
	return m
}

var _ = Describe("Verified rows", func() {
	It("verifies a row written with the Pod-bound token of a run Podium admitted, and keeps it verified when the Pod is gone", func() {
		ns := newOrg()
		alice := newMember(ns, "alice")
		lb := newBoard(ns, "main", "")
		pod := runJob(alice, "eval")

		row := rowOf(lb, "run-result", 0.9)
		Expect(inPod(pod).Create(ctx, row)).To(Succeed())
		Expect(row.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationWriterPod, pod.Name))
		Expect(row.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationWriterPodUID, string(pod.UID)))

		got := settled(row)
		Expect(verifiedReason(got)).To(Equal("True/" + hubv1alpha1.ReasonRunVerified))
		p := got.Status.Provenance
		Expect(p).NotTo(BeNil())
		Expect(p.PodUID).To(Equal(string(pod.UID)))
		Expect(p.Requester).To(Equal(alice.User))
		Expect(p.JobID).To(Equal(jobID))
		Expect(p.Images).To(HaveLen(1))
		Expect(p.Images[0].Digest()).To(Equal(digest))
		Expect(p.RanAt).NotTo(BeNil())
		Expect(p.DatasetVersionIDs).To(Equal([]string{version}))

		Eventually(func(g Gomega) {
			r, ok := publicRows(lb)[hubv1alpha1.ID(got)]
			g.Expect(ok).To(BeTrue())
			g.Expect(r.Verified).To(BeTrue())
			g.Expect(r.Provenance).NotTo(BeNil())
			g.Expect(r.Provenance.ImageDigest).To(Equal(digest))
			g.Expect(r.Provenance.JobID).To(HaveValue(Equal(jobID)))
			g.Expect(r.Provenance.RanAt).NotTo(BeNil())
			g.Expect(r.Provenance.Requester).To(BeNil(), "a public board without showAuthors does not name the requester")
		}).Should(Succeed())

		// The Pod is deleted (the Job's TTL); a later reconcile of the row (a label
		// change) keeps what was recorded.
		Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}))
		}).Should(BeTrue())
		patch := client.MergeFrom(got.DeepCopy())
		got.Labels["example.com/touched"] = "yes"
		Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(verifiedReason(settled(row))).To(Equal("True/" + hubv1alpha1.ReasonRunVerified))
		}).WithTimeout(2 * time.Second).Should(Succeed())
	})

	It("does not verify a row a person writes, nor one sent with a forged writer", func() {
		ns := newOrg()
		alice := newMember(ns, "alice")
		lb := newBoard(ns, "main", "")
		pod := runJob(alice, "eval")

		mine := rowOf(lb, "by-hand", 0.5)
		Expect(alice.C.Create(ctx, mine)).To(Succeed())
		Expect(mine.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationWriterPod))
		Expect(mine.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationWriterPodUID))
		got := settled(mine)
		Expect(verifiedReason(got)).To(BeEmpty())
		Expect(got.Status.Provenance).To(BeNil())

		// The attack: claim the admitted run's Pod as the writer.
		forged := rowOf(lb, "forged", 0.99)
		forged.Annotations = map[string]string{
			hubv1alpha1.AnnotationWriterPod:    pod.Name,
			hubv1alpha1.AnnotationWriterPodUID: string(pod.UID),
		}
		Expect(alice.C.Create(ctx, forged)).To(Succeed())
		Expect(forged.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationWriterPod, ""))
		Expect(forged.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationWriterPodUID, ""))
		got = settled(forged)
		Expect(verifiedReason(got)).To(BeEmpty(), "a row no Pod wrote has no Verified condition")
		Expect(got.Status.Provenance).To(BeNil())

		// Nor by adding them later to the person's row without changing its values.
		patch := client.MergeFrom(mine.DeepCopy())
		mine.Annotations[hubv1alpha1.AnnotationWriterPod] = pod.Name
		mine.Annotations[hubv1alpha1.AnnotationWriterPodUID] = string(pod.UID)
		Expect(alice.C.Patch(ctx, mine, patch)).To(Succeed())
		Expect(mine.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationWriterPodUID, ""))

		Eventually(func(g Gomega) {
			rows := publicRows(lb)
			g.Expect(rows).To(HaveLen(2))
			for _, r := range rows {
				g.Expect(r.Verified).To(BeFalse())
				g.Expect(r.Provenance).To(BeNil())
			}
		}).Should(Succeed())
	})

	It("does not verify a row written from a Pod Podium did not admit", func() {
		ns := newOrg()
		alice := newMember(ns, "alice")
		lb := newBoard(ns, "main", "")
		// No delivery asked: the webhook never sees it, nothing is recorded on it.
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unadmitted"},
			Spec: corev1.PodSpec{ServiceAccountName: alice.Name, RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "eval", Image: "registry.example/eval:1"}}},
		}
		Expect(alice.C.Create(ctx, pod)).To(Succeed())
		Expect(pod.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationRequester))
		pod = started(pod)

		row := rowOf(lb, "unadmitted", 0.9)
		Expect(inPod(pod).Create(ctx, row)).To(Succeed())
		Expect(row.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationWriterPodUID, string(pod.UID)))
		got := settled(row)
		Expect(verifiedReason(got)).To(Equal("False/" + hubv1alpha1.ReasonPodNotAdmitted))
		Expect(got.Status.Provenance).To(BeNil())
	})

	It("stops verifying a row a person edits afterwards, and the history says who", func() {
		ns := newOrg()
		alice := newMember(ns, "alice")
		lb := newBoard(ns, "main", "")
		pod := runJob(alice, "eval")
		row := rowOf(lb, "run-result", 0.4)
		Expect(inPod(pod).Create(ctx, row)).To(Succeed())
		Expect(verifiedReason(settled(row))).To(Equal("True/" + hubv1alpha1.ReasonRunVerified))

		// A change of anything but the values keeps it verified.
		patch := client.MergeFrom(row.DeepCopy())
		row.Annotations["example.com/note"] = "reviewed"
		Expect(alice.C.Patch(ctx, row, patch)).To(Succeed())
		Expect(verifiedReason(settled(row))).To(Equal("True/" + hubv1alpha1.ReasonRunVerified))

		// The attack: raise the score by hand.
		patch = client.MergeFrom(row.DeepCopy())
		row.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(`{"score":0.99}`)}
		Expect(alice.C.Patch(ctx, row, patch)).To(Succeed())
		Expect(row.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationWriterPodUID, ""))
		got := settled(row)
		Expect(verifiedReason(got)).To(Equal("False/" + hubv1alpha1.ReasonNotWrittenByRun))
		Expect(got.Status.Provenance).To(BeNil())
		Expect(got.Status.History).NotTo(BeEmpty())
		last := got.Status.History[len(got.Status.History)-1]
		Expect(last.By).To(Equal(alice.User))
		Expect(last.Generation).To(Equal(got.Generation))
	})

	It("ranks only verified rows on a verified-only board and keeps the others, reported", func() {
		ns := newOrg()
		alice := newMember(ns, "alice")
		lb := newBoard(ns, "strict", hubv1alpha1.SubmissionsVerifiedOnly)
		pod := runJob(alice, "eval")

		run := rowOf(lb, "run-result", 0.5)
		Expect(inPod(pod).Create(ctx, run)).To(Succeed())
		hand := rowOf(lb, "by-hand", 0.9)
		Expect(alice.C.Create(ctx, hand)).To(Succeed())

		gotRun, gotHand := settled(run), settled(hand)
		Expect(ranking.Ranked(gotRun)).To(BeTrue())
		Expect(ranking.Ranked(gotHand)).To(BeFalse())
		c := meta.FindStatusCondition(gotHand.Status.Conditions, hubv1alpha1.ConditionValid)
		Expect(c.Status).To(Equal(metav1.ConditionFalse))
		Expect(c.Reason).To(Equal(hubv1alpha1.ReasonNotVerified))
		Expect(c.Message).To(ContainSubstring("ranks only verified rows"))
		Eventually(func(g Gomega) {
			rows := publicRows(lb)
			g.Expect(rows).To(HaveLen(1))
			g.Expect(rows).To(HaveKey(hubv1alpha1.ID(gotRun)))
			g.Expect(rows[hubv1alpha1.ID(gotRun)].Rank).To(Equal(1))
		}).Should(Succeed())

		// The board's policy relaxed: the person's row is ranked again.
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lb), lb)).To(Succeed())
		lb.Spec.Submissions = hubv1alpha1.SubmissionsAny
		Expect(k8sClient.Update(ctx, lb)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(publicRows(lb)).To(HaveLen(2))
		}).Should(Succeed())
	})
})
