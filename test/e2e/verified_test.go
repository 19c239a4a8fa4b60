//go:build e2e

package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"podium.dev/podium/internal/testenv"
)

// verifiedNS is the org of the verified-rows test (docs/verified-rows.md).
const verifiedNS = "e2e-verified"

const verifiedBoardYAML = `apiVersion: v1
kind: Namespace
metadata:
  name: ` + verifiedNS + `
---
apiVersion: hub.podium.dev/v1alpha1
kind: Dataset
metadata:
  name: bench
  namespace: ` + verifiedNS + `
spec:
  title: Bench
  versions:
  - id: 5d0c3a8e-1f2b-4c6d-8e9f-0a1b2c3d4e5f
    tag: "1.0"
    createdAt: "2026-03-01T00:00:00Z"
---
apiVersion: hub.podium.dev/v1alpha1
kind: Leaderboard
metadata:
  name: bench-main
  namespace: ` + verifiedNS + `
spec:
  package: ` + verifiedNS + `/bench
  name: main
  title: Bench
  visibility: public
  metricsSchema:
    type: object
    properties:
      reward: {type: number}
  rankBy:
  - {accessor: metrics.reward, direction: desc}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: rows
  namespace: ` + verifiedNS + `
data:
  admitted.yaml: |
    rows:
    - {metadata: {agent: admitted}, metrics: {reward: 0.5}}
  unadmitted.yaml: |
    rows:
    - {metadata: {agent: unadmitted}, metrics: {reward: 0.9}}
`

// rowWriter is a container that runs the podium CLI of Podium's image with the Pod's
// in-cluster configuration (no kubeconfig), writing the rows of file.
func rowWriter(file string) corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: "runner",
		RestartPolicy:      corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name: "eval", Image: "podium:dev", ImagePullPolicy: corev1.PullNever,
			Command:      []string{"/podium"},
			Args:         []string{"hub", "leaderboard", "row", "create", verifiedNS + "/bench/main", "--config", "/rows/" + file},
			VolumeMounts: []corev1.VolumeMount{{Name: "rows", MountPath: "/rows"}},
		}},
		Volumes: []corev1.Volume{{Name: "rows", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "rows"}},
		}}},
	}
}

// finished waits until the Pod ran to completion and returns it.
func finished(ns, selector string) corev1.Pod {
	var pod corev1.Pod
	EventuallyWithOffset(1, func(g Gomega) {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods.Items).To(HaveLen(1))
		pod = pods.Items[0]
		if pod.Status.Phase == corev1.PodFailed {
			logs, _ := cs.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
			StopTrying("the row writer failed: " + string(logs)).Now()
		}
		g.Expect(pod.Status.Phase).To(Equal(corev1.PodSucceeded))
	}).WithTimeout(3 * time.Minute).Should(Succeed())
	return pod
}

func digestOf(imageID string) string {
	if i := strings.Index(imageID, "sha256:"); i >= 0 {
		return imageID[i:]
	}
	return imageID
}

// verifiedRowsOnARealNode: a Job admitted with a key runs the podium CLI in its
// container and writes its row; the public read shows it verified with the digest of
// the image that ran. A Pod started without Podium's admission writing a row of the
// same board is not verified.
func verifiedRowsOnARealNode() {
	run(verifiedBoardYAML, "apply", "--server-side", "-f", "-")
	run("", "-n", verifiedNS, "wait", "--for=condition=Ready", "leaderboard/bench-main", "--timeout=2m")
	_, err := cs.RbacV1().Roles(verifiedNS).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "run-submitter", Namespace: verifiedNS},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "create"}}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	_, err = cs.RbacV1().RoleBindings(verifiedNS).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "runner-jobs", Namespace: verifiedNS},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "run-submitter"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "runner", Namespace: verifiedNS}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	token, err := testenv.ServiceAccountToken(ctx, cs, verifiedNS, "runner", "podium-org-owner")
	Expect(err).NotTo(HaveOccurred())
	c := newClient()

	By("storing a key over HTTP, then submitting a Job that asks for it and writes its row with the CLI")
	Eventually(func(g Gomega) {
		code, body, err := do(c, http.MethodPost, "/v1/secrets", token, map[string]string{"env_var": "EVAL_KEY", "value": "sk-e2e-verified-0123456789"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusCreated), "%s", body)
	}).WithTimeout(time.Minute).Should(Succeed())
	runner := rest.AnonymousClientConfig(cfg)
	runner.BearerToken = token
	rcs, err := kubernetes.NewForConfig(runner)
	Expect(err).NotTo(HaveOccurred())
	const jobID = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "eval-verified", Namespace: verifiedNS, Annotations: map[string]string{
			"hub.podium.dev/secrets": "EVAL_KEY", "hub.podium.dev/job-id": jobID,
		}},
		Spec: batchv1.JobSpec{BackoffLimit: ptr.To(int32(0)), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"hub.podium.dev/job-id": jobID}},
			Spec:       rowWriter("admitted.yaml"),
		}},
	}
	Eventually(func(g Gomega) {
		_, err := rcs.BatchV1().Jobs(verifiedNS).Create(ctx, job, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			g.Expect(err).NotTo(HaveOccurred())
		}
	}).WithTimeout(time.Minute).Should(Succeed())
	admitted := finished(verifiedNS, "batch.kubernetes.io/job-name=eval-verified")
	Expect(admitted.Annotations).To(HaveKeyWithValue("hub.podium.dev/requester", "system:serviceaccount:"+verifiedNS+":runner"))
	Expect(admitted.Status.ContainerStatuses).To(HaveLen(1))
	ran := digestOf(admitted.Status.ContainerStatuses[0].ImageID)
	Expect(ran).To(HavePrefix("sha256:"))

	By("starting a Pod without Podium's admission that writes a row of the same board")
	unadmitted := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "unadmitted", Namespace: verifiedNS, Labels: map[string]string{"e2e": "unadmitted"}},
		Spec:       rowWriter("unadmitted.yaml"),
	}
	_, err = cs.CoreV1().Pods(verifiedNS).Create(ctx, unadmitted, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	got := finished(verifiedNS, "e2e=unadmitted")
	Expect(got.Annotations).NotTo(HaveKey("hub.podium.dev/requester"))

	By("the public read: the Job's row verified with the digest that ran, the other not")
	type row struct {
		Metadata   struct{ Agent string }
		Verified   bool
		Provenance *struct {
			JobID       *string `json:"job_id"`
			ImageDigest string  `json:"image_digest"`
			RanAt       *string `json:"ran_at"`
		}
	}
	Eventually(func(g Gomega) {
		code, body, err := do(c, http.MethodGet, "/v1/leaderboards/"+verifiedNS+"/bench/main", "", nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK), "%s", body)
		var read struct{ Rows []row }
		g.Expect(json.Unmarshal(body, &read)).To(Succeed())
		byAgent := map[string]row{}
		for _, r := range read.Rows {
			byAgent[r.Metadata.Agent] = r
		}
		g.Expect(byAgent).To(HaveKey("admitted"))
		g.Expect(byAgent).To(HaveKey("unadmitted"))
		a := byAgent["admitted"]
		g.Expect(a.Verified).To(BeTrue(), "%s", body)
		g.Expect(a.Provenance).NotTo(BeNil())
		g.Expect(a.Provenance.ImageDigest).To(Equal(ran))
		g.Expect(a.Provenance.JobID).To(HaveValue(Equal(jobID)))
		g.Expect(a.Provenance.RanAt).NotTo(BeNil())
		u := byAgent["unadmitted"]
		g.Expect(u.Verified).To(BeFalse())
		g.Expect(u.Provenance).To(BeNil())
	}).WithTimeout(time.Minute).Should(Succeed())
	out := run("", "-n", verifiedNS, "get", "leaderboardrows", "-o", "jsonpath={range .items[*]}{.spec.metadata.agent}={.status.conditions[?(@.type==\"Verified\")].reason}{\"\\n\"}{end}")
	Expect(out).To(ContainSubstring("unadmitted=PodNotAdmitted"))
	Expect(out).To(ContainSubstring("admitted=RunVerified"))
}
