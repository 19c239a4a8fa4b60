package delivery_test

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/delivery"
)

func job(name string, annotations map[string]string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: batchv1.JobSpec{
			// No Job controller acts on it (there may be one in the test control plane):
			// the tests play its part where needed.
			ManagedBy: ptr.To("test.podium.dev/none"),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy:  corev1.RestartPolicyNever,
				InitContainers: []corev1.Container{{Name: "setup", Image: "busybox"}},
				Containers: []corev1.Container{
					{Name: "agent", Image: "busybox"},
					{Name: "sidecar", Image: "busybox", Env: []corev1.EnvVar{{Name: "ANTHROPIC_API_KEY", Value: "set-by-hand"}}},
				},
			}},
		},
	}
}

func pod(name string, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "busybox"}}},
	}
}

// envRef returns the secretKeyRef of name in c, nil when c has no such variable.
func envRef(c corev1.Container, name string) *corev1.SecretKeySelector {
	for _, e := range c.Env {
		if e.Name == name {
			if e.ValueFrom == nil {
				return nil
			}
			return e.ValueFrom.SecretKeyRef
		}
	}
	return nil
}

// runSecret waits for the run Secret ns/name: a Job's is written right after its
// admission answered.
func runSecret(ns, name string) *corev1.Secret {
	s := &corev1.Secret{}
	EventuallyWithOffset(1, func() error { return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s) }).Should(Succeed())
	return s
}

func runSecretCount(ns string) int {
	list := &corev1.SecretList{}
	ExpectWithOffset(1, k8sClient.List(ctx, list, client.InNamespace(ns), client.HasLabels{hubv1alpha1.LabelRunFor})).To(Succeed())
	return len(list.Items)
}

func ownerUID(s *corev1.Secret) string {
	for _, o := range s.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return string(o.UID)
		}
	}
	return ""
}

var _ = Describe("Delivery into Jobs", func() {
	var acme org
	var alice, bob person
	var aliceKey, bobKey record
	const aliceValue, bobValue = "sk-ant-alice-0000000000000000001", "sk-ant-bob-00000000000000000002"

	BeforeEach(func() {
		acme = newOrg("acme")
		alice, bob = newPerson(acme, "alice"), newPerson(acme, "bob")
		aliceKey = store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": aliceValue, "provider": "anthropic"})
		bobKey = store(bob, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": bobValue, "provider": "anthropic"})
	})

	It("delivers the requester's own key, records the requester, warns about the rest and sets last_used_at", func() {
		j := job("eval-1", map[string]string{
			hubv1alpha1.AnnotationSecrets:   "ANTHROPIC_API_KEY, OPENAI_API_KEY,PATH",
			hubv1alpha1.AnnotationModels:    "terminus=anthropic/claude-opus-4,aider=openai/gpt-4o",
			hubv1alpha1.AnnotationRequester: bob.User, // forged: replaced
		})
		j.Labels = map[string]string{hubv1alpha1.LabelRunSecret: "someone-elses"} // forged: replaced
		created, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, j, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("recording alice as the requester, on the Job and its pod template")
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
		Expect(created.Spec.Template.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationDelivered, "ANTHROPIC_API_KEY"))
		name := created.Labels[hubv1alpha1.LabelRunSecret]
		Expect(name).To(HavePrefix("podium-run-"))

		By("pointing every container at the run Secret, not optional; a variable set by hand stays")
		tmpl := created.Spec.Template.Spec
		for _, c := range append(tmpl.InitContainers, tmpl.Containers[0]) {
			ref := envRef(c, "ANTHROPIC_API_KEY")
			Expect(ref).NotTo(BeNil(), c.Name)
			Expect(ref.Name).To(Equal(name))
			Expect(ref.Key).To(Equal("ANTHROPIC_API_KEY"))
			Expect(ref.Optional).To(Equal(ptr.To(false)))
			Expect(envRef(c, "PATH")).To(BeNil())
		}
		Expect(envRef(tmpl.Containers[0], "OPENAI_API_KEY")).To(BeNil())
		Expect(tmpl.Containers[1].Env).To(Equal([]corev1.EnvVar{{Name: "ANTHROPIC_API_KEY", Value: "set-by-hand"}}))

		By("holding alice's value, never bob's, in the run Secret, owned by the Job")
		s := runSecret(acme.Name, name)
		Expect(s.Data).To(Equal(map[string][]byte{"ANTHROPIC_API_KEY": []byte(aliceValue)}))
		Expect(s.Annotations[hubv1alpha1.AnnotationRunHostedSecrets]).To(ContainSubstring(aliceKey.ID))
		Expect(s.Annotations[hubv1alpha1.AnnotationRunHostedSecrets]).NotTo(ContainSubstring(bobKey.ID))
		Eventually(func() string { return ownerUID(runSecret(acme.Name, name)) }).Should(Equal(string(created.UID)))

		By("reading the values from the operator's value namespace: the org's Secrets are run Secrets only")
		var inOrg corev1.SecretList
		Expect(k8sClient.List(ctx, &inOrg, client.InNamespace(acme.Name))).To(Succeed())
		Expect(inOrg.Items).NotTo(BeEmpty())
		for _, o := range inOrg.Items {
			Expect(o.Labels).To(HaveKey(hubv1alpha1.LabelRunFor), "Secret %s of the org namespace", o.Name)
		}

		By("warning about the missing and the reserved variable, naming the agent and model")
		w := strings.Join(alice.warnings.take(), "\n")
		Expect(w).To(ContainSubstring("OPENAI_API_KEY is not delivered"))
		Expect(w).To(ContainSubstring("aider (openai/gpt-4o)"))
		Expect(w).To(ContainSubstring("PATH is reserved and never delivered"))
		Expect(w).To(ContainSubstring("aider (openai/gpt-4o) gets no openai key"))
		Expect(w).To(ContainSubstring("container sidecar sets ANTHROPIC_API_KEY itself"))
		Expect(w).NotTo(ContainSubstring("terminus (anthropic/claude-opus-4) gets no"))

		By("setting last_used_at of the delivered secret only")
		recs := listed(alice)
		Expect(recs[aliceKey.ID].LastUsedAt).NotTo(BeNil())
		Expect(recs[bobKey.ID].LastUsedAt).To(BeNil())
	})

	It("prefers the job-scope secret of the job id, and falls back to the user's", func() {
		jobID := uuid.NewString()
		store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-job-scope-000000000003", "scope": "job", "job_id": jobID})
		withID, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("with-id", map[string]string{
			hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY", hubv1alpha1.AnnotationJobID: strings.ToUpper(jobID),
		}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(runSecret(acme.Name, withID.Labels[hubv1alpha1.LabelRunSecret]).Data["ANTHROPIC_API_KEY"]).To(Equal([]byte("sk-ant-job-scope-000000000003")))

		otherID, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("other-id", map[string]string{
			hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY", hubv1alpha1.AnnotationJobID: uuid.NewString(),
		}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(runSecret(acme.Name, otherID.Labels[hubv1alpha1.LabelRunSecret]).Data["ANTHROPIC_API_KEY"]).To(Equal([]byte(aliceValue)))
	})

	It("never hands a job's secret to a run of another user who names the job id", func() {
		// Job ids are no secret: every member lists the org's HostedSecrets.
		jobID := uuid.NewString()
		store(alice, map[string]any{"env_var": "GITHUB_TOKEN", "value": "ghp-alice-job-only-00000000004", "scope": "job", "job_id": jobID})
		carol := newPerson(acme, "carol")
		created, err := carol.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("steal-job", map[string]string{
			hubv1alpha1.AnnotationSecrets: "GITHUB_TOKEN", hubv1alpha1.AnnotationJobID: jobID,
		}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(created.Labels).NotTo(HaveKey(hubv1alpha1.LabelRunSecret))
		Expect(envRef(created.Spec.Template.Spec.Containers[0], "GITHUB_TOKEN")).To(BeNil())
		Expect(strings.Join(carol.warnings.take(), "\n")).To(ContainSubstring("GITHUB_TOKEN of job " + jobID + " was stored by another user"))

		mine, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("own-job", map[string]string{
			hubv1alpha1.AnnotationSecrets: "GITHUB_TOKEN", hubv1alpha1.AnnotationJobID: jobID,
		}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(runSecret(acme.Name, mine.Labels[hubv1alpha1.LabelRunSecret]).Data["GITHUB_TOKEN"]).To(Equal([]byte("ghp-alice-job-only-00000000004")))
	})

	It("gives a run of someone with no key nothing, and says so", func() {
		carol := newPerson(acme, "carol")
		created, err := carol.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("carol", map[string]string{
			hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY", hubv1alpha1.AnnotationJobID: "not-a-uuid",
		}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(created.Labels).NotTo(HaveKey(hubv1alpha1.LabelRunSecret))
		Expect(envRef(created.Spec.Template.Spec.Containers[0], "ANTHROPIC_API_KEY")).To(BeNil())
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, carol.User))
		w := strings.Join(carol.warnings.take(), "\n")
		Expect(w).To(ContainSubstring("ANTHROPIC_API_KEY is not delivered: " + carol.User + " has no active secret for it"))
		Expect(w).To(ContainSubstring(`"not-a-uuid" is not a UUID`))

		By("naming a job id, it says that neither the job nor the requester has one")
		jobID := uuid.NewString()
		_, err = carol.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("carol-job", map[string]string{
			hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY", hubv1alpha1.AnnotationJobID: jobID,
		}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Join(carol.warnings.take(), "\n")).To(ContainSubstring(
			"ANTHROPIC_API_KEY is not delivered: neither job " + jobID + " nor " + carol.User + " has an active secret for it"))
		Expect(runSecretCount(acme.Name)).To(Equal(0))
	})

	It("keeps what admission recorded when the Job is updated", func() {
		created, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("keep", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		name := created.Labels[hubv1alpha1.LabelRunSecret]
		created.Annotations[hubv1alpha1.AnnotationRequester] = bob.User
		delete(created.Annotations, hubv1alpha1.AnnotationDelivered)
		created.Labels[hubv1alpha1.LabelRunSecret] = "podium-run-forged"
		created.Annotations["note"] = "changed"
		updated, err := alice.CS.BatchV1().Jobs(acme.Name).Update(ctx, created, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(updated.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
		Expect(updated.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationDelivered, "ANTHROPIC_API_KEY"))
		Expect(updated.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelRunSecret, name))
		Expect(updated.Annotations).To(HaveKeyWithValue("note", "changed"))
	})

	It("looks nothing up and creates nothing on a dry run, and leaves last_used_at alone", func() {
		created, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("dry", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY,OPENAI_API_KEY,PATH"}),
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		Expect(err).NotTo(HaveOccurred())
		// The answer does not depend on what the requester holds (docs/secrets.md, "Dry runs").
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
		Expect(created.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationDelivered))
		Expect(created.Labels).NotTo(HaveKey(hubv1alpha1.LabelRunSecret))
		Expect(envRef(created.Spec.Template.Spec.Containers[0], "ANTHROPIC_API_KEY")).To(BeNil())
		w := strings.Join(alice.warnings.take(), "\n")
		Expect(w).To(ContainSubstring("this is a dry run: no hosted secret was looked up"))
		Expect(w).To(ContainSubstring("PATH is reserved"))
		Expect(w).NotTo(ContainSubstring("is not delivered"))
		Expect(runSecretCount(acme.Name)).To(Equal(0))
		Expect(listed(alice)[aliceKey.ID].LastUsedAt).To(BeNil())
	})

	It("deletes the run Secret when the Job finishes", func() {
		created, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("done", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		name := created.Labels[hubv1alpha1.LabelRunSecret]
		Eventually(func() string { return ownerUID(runSecret(acme.Name, name)) }).Should(Equal(string(created.UID)))
		// No Job controller runs here: finish the Job as it would.
		now := metav1.Now()
		created.Status = batchv1.JobStatus{
			StartTime: &now, CompletionTime: &now, Succeeded: 1,
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
			},
		}
		Expect(k8sClient.Status().Update(ctx, created)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: name}, &corev1.Secret{}))
		}).Should(BeTrue())
		By("a finished Job's run Secret is never written again")
		Consistently(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: name}, &corev1.Secret{}))
		}, delivery.ReissueAfter+3*time.Second, time.Second).Should(BeTrue())
	})

	It("writes a Job's run Secret again when the write after its admission did not happen", func() {
		created, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("reissued", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		name := created.Labels[hubv1alpha1.LabelRunSecret]
		first := runSecret(acme.Name, name)
		By("the run Secret is lost before the Job's Pods read it (as if the operator had stopped before writing it)")
		Expect(k8sClient.Delete(ctx, first)).To(Succeed())
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: name}, &corev1.Secret{})
		}, delivery.ReissueAfter+30*time.Second).Should(Succeed())
		again := runSecret(acme.Name, name)
		Expect(again.UID).NotTo(Equal(first.UID))
		Expect(again.Data).To(Equal(first.Data), "the same values, resolved again for the recorded requester")
		Expect(again.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
		Eventually(func() string { return ownerUID(runSecret(acme.Name, name)) }).Should(Equal(string(created.UID)))
	})

	It("writes no run Secret for a Job that was not stored, and deletes one no run was created with", func() {
		_, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("twice", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() int { return runSecretCount(acme.Name) }).Should(Equal(1))
		By("admission gives the second Job a run Secret before the name conflict refuses it; it is never written")
		_, err = alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("twice", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}), metav1.CreateOptions{})
		Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "%v", err)
		// The write waits for the Job's store at most ReissueAfter, then gives up.
		Consistently(func() int { return runSecretCount(acme.Name) }, delivery.ReissueAfter+2*time.Second, 500*time.Millisecond).Should(Equal(1))
		By("a run Secret whose run never appears (written by hand here) is deleted after the grace")
		stray := delivery.RunSecret(acme.Name, delivery.RunSecretName(), delivery.KindJob, alice.User, delivery.Plan{})
		Expect(k8sClient.Create(ctx, stray)).To(Succeed())
		Expect(runSecretCount(acme.Name)).To(Equal(2))
		Eventually(func() int { return runSecretCount(acme.Name) }, orphanGrace+30*time.Second).Should(Equal(1))
	})

	It("removes a revoked secret from the run Secret of a Job that has not started", func() {
		created, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("revoked", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		name := created.Labels[hubv1alpha1.LabelRunSecret]
		Expect(runSecret(acme.Name, name).Data).To(HaveKey("ANTHROPIC_API_KEY"))
		code, body := call(alice, http.MethodDelete, "/v1/secrets", map[string]any{"env_var": "ANTHROPIC_API_KEY"})
		Expect(code).To(Equal(http.StatusOK), string(body))
		Eventually(func() map[string][]byte { return runSecret(acme.Name, name).Data }).ShouldNot(HaveKey("ANTHROPIC_API_KEY"))
		Expect(runSecret(acme.Name, name).Annotations[hubv1alpha1.AnnotationRunHostedSecrets]).To(BeEmpty())
	})
})

var _ = Describe("Delivery into Pods", func() {
	var acme org
	var bob person

	BeforeEach(func() {
		acme = newOrg("pods")
		bob = newPerson(acme, "bob")
		store(bob, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-openai-bob-0000000000000004"})
	})

	It("delivers into a bare Pod, owned by it, and warns about reserved names", func() {
		// generateName: the Pod's name is unknown at admission.
		p := pod("", map[string]string{hubv1alpha1.AnnotationSecrets: "OPENAI_API_KEY,HTTPS_PROXY,MODAL_TOKEN"})
		p.GenerateName = "run-"
		created, err := bob.CS.CoreV1().Pods(acme.Name).Create(ctx, p, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, bob.User))
		name := created.Labels[hubv1alpha1.LabelRunSecret]
		Expect(envRef(created.Spec.Containers[0], "OPENAI_API_KEY")).To(Equal(&corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "OPENAI_API_KEY", Optional: ptr.To(false),
		}))
		Expect(envRef(created.Spec.Containers[0], "HTTPS_PROXY")).To(BeNil())
		s := runSecret(acme.Name, name)
		Expect(s.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelRunFor, "Pod"))
		Expect(s.Data).To(Equal(map[string][]byte{"OPENAI_API_KEY": []byte("sk-openai-bob-0000000000000004")}))
		Eventually(func() string { return ownerUID(runSecret(acme.Name, name)) }).Should(Equal(string(created.UID)))
		w := strings.Join(bob.warnings.take(), "\n")
		Expect(w).To(ContainSubstring("HTTPS_PROXY is reserved"))
		Expect(w).To(ContainSubstring("MODAL_TOKEN is reserved"))

		By("deleting it when the Pod has finished")
		created.Status.Phase = corev1.PodSucceeded
		Expect(k8sClient.Status().Update(ctx, created)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: name}, &corev1.Secret{}))
		}).Should(BeTrue())
	})

	It("writes a Pod's run Secret again when the write after its admission did not happen", func() {
		created, err := bob.CS.CoreV1().Pods(acme.Name).Create(ctx, pod("reissued", map[string]string{hubv1alpha1.AnnotationSecrets: "OPENAI_API_KEY"}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		name := created.Labels[hubv1alpha1.LabelRunSecret]
		first := runSecret(acme.Name, name)
		By("the run Secret is lost before the Pod's kubelet read it (as if the operator had stopped before writing it)")
		Expect(k8sClient.Delete(ctx, first)).To(Succeed())
		Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: name}, &corev1.Secret{})
		}, delivery.ReissueAfter+30*time.Second).Should(Succeed())
		again := runSecret(acme.Name, name)
		Expect(again.UID).NotTo(Equal(first.UID))
		Expect(again.Data).To(Equal(first.Data), "the same values, resolved again for the recorded requester")
		Expect(again.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelRunFor, delivery.KindPod))
		Expect(ownerUID(again)).To(Equal(string(created.UID)), "owned by the Pod from its first write")
	})

	It("never sees a Pod that does not ask for secrets", func() {
		created, err := bob.CS.CoreV1().Pods(acme.Name).Create(ctx, pod("plain", nil), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(created.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationRequester))
		Expect(bob.warnings.take()).To(BeEmpty())
	})

	It("replaces a requester forged on a Pod that does not ask for secrets", func() {
		created, err := bob.CS.CoreV1().Pods(acme.Name).Create(ctx, pod("forged", map[string]string{hubv1alpha1.AnnotationRequester: "alice"}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, bob.User))
	})

	It("leaves a Job's Pods created by kube-controller-manager's own user as their template made them", func() {
		// kube-controller-manager without --use-service-account-credentials.
		u, err := testEnv.AddUser(envtest.User{Name: "system:kube-controller-manager"}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "kcm-runs"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "test-run-submitter"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "system:kube-controller-manager"}},
		})).To(Succeed())
		kcm, err := kubernetes.NewForConfig(u.Config())
		Expect(err).NotTo(HaveOccurred())
		owner, err := bob.CS.BatchV1().Jobs(acme.Name).Create(ctx, job("owner", map[string]string{hubv1alpha1.AnnotationSecrets: "OPENAI_API_KEY"}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		fromJob := pod("kcm-from-job", owner.Spec.Template.Annotations)
		fromJob.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
		created, err := kcm.CoreV1().Pods(acme.Name).Create(ctx, fromJob, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, bob.User))
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationDelivered, "OPENAI_API_KEY"))

		By("a Pod it creates from another template (a ReplicaSet's) is a run of the requester admission recorded there")
		loose, err := kcm.CoreV1().Pods(acme.Name).Create(ctx, pod("kcm-loose", map[string]string{
			hubv1alpha1.AnnotationRequester: bob.User, hubv1alpha1.AnnotationSecrets: "OPENAI_API_KEY"}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(loose.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, bob.User))
		Expect(loose.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationDelivered, "OPENAI_API_KEY"))
		Expect(loose.Labels[hubv1alpha1.LabelRunSecret]).NotTo(Equal(created.Labels[hubv1alpha1.LabelRunSecret]))
	})

	It("leaves the Pods of the Job controller as their template made them", func() {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "job-controller"}}
		if err := k8sClient.Create(ctx, sa); err != nil {
			Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "%v", err)
		}
		tr, err := clientset.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "job-controller", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		token := tr.Status.Token
		bindRuns(acme.Name, "kube-system", "job-controller")
		jc, _ := clientAs(token)
		p := pod("from-job", map[string]string{hubv1alpha1.AnnotationSecrets: "OPENAI_API_KEY", hubv1alpha1.AnnotationRequester: bob.User})
		created, err := jc.CoreV1().Pods(acme.Name).Create(ctx, p, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(created.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, bob.User))
		Expect(created.Labels).NotTo(HaveKey(hubv1alpha1.LabelRunSecret))
		Expect(runSecretCount(acme.Name)).To(Equal(0))
	})
})
