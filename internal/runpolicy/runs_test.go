package runpolicy_test

import (
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// The rules' names as their refusals say them (config/admission).
const (
	integrityRule = "a delivered run cannot be changed under its owner"
	identityRule  = "users cannot be impersonated through Pods"
)

// aliceValue is alice's key: no refusal may carry it.
const aliceValue = "sk-ant-alice-runpolicy-00000000000001"

var _ = Describe("Runs cannot be changed or impersonated", Ordered, ContinueOnFailure, func() {
	var ns string
	var alice, bob, carol, owner, platform, queue person
	// alice's runs: a bare Pod and a Job's Pod holding her delivered key, a Deployment
	// and a CronJob whose templates record a delivery to her, and a Deployment running
	// as her own ServiceAccount with the Pod its ReplicaSet made.
	var alicePod, alicePodRunSecret, aliceJobPod, aliceAsAlicePod string
	const aliceDeploy, aliceCron, aliceAsAlice = "alice-deploy", "alice-cron", "alice-as-alice"

	BeforeAll(func() {
		o := testenv.Namespace("runs")
		Expect(k8sClient.Create(ctx, o)).To(Succeed())
		ns = o.Name
		alice = newPerson(ns, "alice", "podium-org-member", "test-workloads")
		bob = newPerson(ns, "bob", "podium-org-member", "test-workloads")
		// a Pod creator with no Podium role at all
		carol = newPerson(ns, "carol", "", "test-workloads")
		owner = newPerson(ns, "owner", "podium-org-owner", "test-workloads")
		// may impersonate the namespace's ServiceAccounts (kubectl --as)
		platform = newPerson(ns, "platform", "", "test-workloads", "test-impersonate-serviceaccounts")
		// a batch queue the platform team trusts with others' runs
		queue = newPerson(ns, "queue", "", "test-workloads", "test-change-others")
		// a workload ServiceAccount with no Podium right
		Expect(k8sClient.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runner"}})).To(Succeed())

		store(alice, "ANTHROPIC_API_KEY", aliceValue)

		By("alice's bare Pod gets her key")
		pod, err := alice.CS.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "alice-pod", Annotations: map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}},
			Spec:       podSpec("", "eval:1"),
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(pod.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelRunSecret, HavePrefix("podium-run-")))
		Expect(pod.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
		alicePod, alicePodRunSecret = pod.Name, pod.Labels[hubv1alpha1.LabelRunSecret]
		Expect(pod.Labels[hubv1alpha1.LabelRunSecret]).NotTo(BeEmpty())

		By("alice's Job gets her key, and the Job controller makes its Pod")
		_, err = alice.CS.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "alice-job", Annotations: map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}},
			Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec("", "eval:1")}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			pods, err := clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=alice-job"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods.Items).To(HaveLen(1))
			p := pods.Items[0]
			g.Expect(p.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
			g.Expect(p.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationDelivered, "ANTHROPIC_API_KEY"))
			g.Expect(p.Spec.Containers[0].Env).To(ContainElement(HaveField("ValueFrom.SecretKeyRef.Key", "ANTHROPIC_API_KEY")))
			aliceJobPod = p.Name
		}).Should(Succeed())

		// alice's Deployment and CronJob ask for her key on their templates: admission
		// records her as their requester (the Pods and Jobs their controllers make are
		// her runs, docs/secrets.md "Who the requester is").
		marks := metav1.ObjectMeta{
			Labels:      map[string]string{"app": "alice"},
			Annotations: map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"},
		}
		deploy, err := alice.CS.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: aliceDeploy},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](0),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "alice"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: marks, Spec: alwaysRestart(podSpec("", "eval:1"))},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(deploy.Spec.Template.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
		cron, err := alice.CS.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Name: aliceCron},
			Spec: batchv1.CronJobSpec{
				Schedule: "0 0 * * *", Suspend: ptr.To(true),
				JobTemplate: batchv1.JobTemplateSpec{ObjectMeta: marks, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec("", "eval:1")}}},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(cron.Spec.JobTemplate.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))

		By("alice's Deployment running as her own ServiceAccount: the workload controllers make its Pod")
		_, err = alice.CS.AppsV1().Deployments(ns).Create(ctx, deployment(aliceAsAlice, "alice", 1), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		aliceAsAlicePod = awaitPods(ns, aliceAsAlice, 1)[0].Name
	})

	// attacks run as the hostile member bob and as carol, who has no Podium role; each
	// must be refused by the rule, naming the object, and never carry alice's value.
	DescribeTable("TestRunPolicyRefuses",
		func(attack func(p person) error, object func(p person) string, rule string) {
			for _, p := range []person{bob, carol} {
				err := attack(p)
				Expect(err).To(HaveOccurred(), "%s was let through", p.Name)
				var status apierrors.APIStatus
				Expect(apierrors.IsForbidden(err) && errors.As(err, &status)).To(BeTrue(), "%s: %v", p.Name, err)
				msg := status.Status().Message
				Expect(msg).To(ContainSubstring(rule), p.Name)
				Expect(msg).To(ContainSubstring(object(p)), p.Name)
				Expect(msg).NotTo(ContainSubstring(aliceValue[:len(aliceValue)-4]))
			}
		},
		// vector 4: a delivered run cannot be changed under its owner
		Entry("patch alice's Pod image", func(p person) error {
			return patchImage(p, "pods", alicePod)
		}, func(person) string { return "pods " + ns + "/" + alicePod }, integrityRule),
		Entry("patch the image of alice's Job's Pod", func(p person) error {
			return patchImage(p, "pods", aliceJobPod)
		}, func(person) string { return "pods " + ns + "/" + aliceJobPod }, integrityRule),
		Entry("add an ephemeral container to alice's Pod", func(p person) error {
			return addEphemeral(p, alicePod)
		}, func(person) string { return "add ephemeral containers" }, integrityRule),
		Entry("edit alice's Deployment template image", func(p person) error {
			return patchImage(p, "deployments", aliceDeploy)
		}, func(person) string { return "deployments " + ns + "/" + aliceDeploy }, integrityRule),
		Entry("edit alice's CronJob template image", func(p person) error {
			return patchImage(p, "cronjobs", aliceCron)
		}, func(person) string { return "cronjobs " + ns + "/" + aliceCron }, integrityRule),

		// vector 5: users cannot be impersonated through Pods
		Entry("Pod with serviceAccountName alice", func(p person) error {
			return createPod(p, "as-alice-"+p.Name, podSpec("alice", "evil:1"))
		}, func(p person) string { return "pods " + ns + "/as-alice-" + p.Name }, identityRule),
		Entry("Pod with serviceAccountName of the org owner", func(p person) error {
			return createPod(p, "as-owner-"+p.Name, podSpec("owner", "evil:1"))
		}, func(person) string { return "serviceAccountName owner" }, identityRule),
		Entry("Pod as alice with only a projected token for another audience", func(p person) error {
			spec := podSpec("alice", "evil:1")
			spec.AutomountServiceAccountToken = ptr.To(false)
			spec.Volumes = []corev1.Volume{{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "https://evil.example", Path: "token"}}},
			}}}}
			spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "token", MountPath: "/var/run/evil"}}
			return createPod(p, "projected-"+p.Name, spec)
		}, func(person) string { return "serviceAccountName alice" }, identityRule),
		Entry("Deployment template as alice", func(p person) error {
			_, err := p.CS.AppsV1().Deployments(ns).Create(ctx, deployment("dep-as-alice-"+p.Name, "alice", 1), metav1.CreateOptions{})
			return err
		}, func(p person) string { return "deployments " + ns + "/dep-as-alice-" + p.Name }, identityRule),
		Entry("Job template as alice", func(p person) error {
			_, err := p.CS.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "job-as-alice-" + p.Name},
				Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec("alice", "evil:1")}},
			}, metav1.CreateOptions{})
			return err
		}, func(p person) string { return "jobs " + ns + "/job-as-alice-" + p.Name }, identityRule),
		Entry("CronJob template as alice", func(p person) error {
			_, err := p.CS.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{
				ObjectMeta: metav1.ObjectMeta{Name: "cron-as-alice-" + p.Name},
				Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
					Template: corev1.PodTemplateSpec{Spec: podSpec("alice", "evil:1")}}}},
			}, metav1.CreateOptions{})
			return err
		}, func(p person) string { return "cronjobs " + ns + "/cron-as-alice-" + p.Name }, identityRule),
		Entry("StatefulSet template as alice", func(p person) error {
			_, err := p.CS.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
				ObjectMeta: metav1.ObjectMeta{Name: "sts-as-alice-" + p.Name},
				Spec: appsv1.StatefulSetSpec{ServiceName: "x", Selector: selector("sts"),
					Template: corev1.PodTemplateSpec{ObjectMeta: labels("sts"), Spec: alwaysRestart(podSpec("alice", "evil:1"))}},
			}, metav1.CreateOptions{})
			return err
		}, func(p person) string { return "statefulsets " + ns + "/sts-as-alice-" + p.Name }, identityRule),
		Entry("DaemonSet template as alice", func(p person) error {
			_, err := p.CS.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: "ds-as-alice-" + p.Name},
				Spec: appsv1.DaemonSetSpec{Selector: selector("ds"),
					Template: corev1.PodTemplateSpec{ObjectMeta: labels("ds"), Spec: alwaysRestart(podSpec("alice", "evil:1"))}},
			}, metav1.CreateOptions{})
			return err
		}, func(p person) string { return "daemonsets " + ns + "/ds-as-alice-" + p.Name }, identityRule),
		Entry("ReplicaSet template as alice", func(p person) error {
			_, err := p.CS.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "rs-as-alice-" + p.Name},
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: selector("rs"),
					Template: corev1.PodTemplateSpec{ObjectMeta: labels("rs"), Spec: alwaysRestart(podSpec("alice", "evil:1"))}},
			}, metav1.CreateOptions{})
			return err
		}, func(p person) string { return "replicasets " + ns + "/rs-as-alice-" + p.Name }, identityRule),
		Entry("ReplicationController template as alice", func(p person) error {
			_, err := p.CS.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{
				ObjectMeta: metav1.ObjectMeta{Name: "rc-as-alice-" + p.Name},
				Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](0), Selector: map[string]string{"app": "rc"},
					Template: &corev1.PodTemplateSpec{ObjectMeta: labels("rc"), Spec: alwaysRestart(podSpec("alice", "evil:1"))}},
			}, metav1.CreateOptions{})
			return err
		}, func(p person) string { return "replicationcontrollers " + ns + "/rc-as-alice-" + p.Name }, identityRule),
		Entry("PodTemplate as alice", func(p person) error {
			_, err := p.CS.CoreV1().PodTemplates(ns).Create(ctx, &corev1.PodTemplate{
				ObjectMeta: metav1.ObjectMeta{Name: "tpl-as-alice-" + p.Name},
				Template:   corev1.PodTemplateSpec{Spec: podSpec("alice", "evil:1")},
			}, metav1.CreateOptions{})
			return err
		}, func(p person) string { return "podtemplates " + ns + "/tpl-as-alice-" + p.Name }, identityRule),
		Entry("edit the image of alice's Deployment that runs as alice", func(p person) error {
			return patchImage(p, "deployments", aliceAsAlice)
		}, func(person) string { return "deployments " + ns + "/" + aliceAsAlice }, identityRule),
		Entry("add an ephemeral container to a Pod that runs as alice", func(p person) error {
			return addEphemeral(p, aliceAsAlicePod)
		}, func(person) string { return "pods " + ns + "/" + aliceAsAlicePod }, identityRule),
		Entry("switch one's own Deployment to alice's ServiceAccount", func(p person) error {
			name := "own-" + p.Name
			if _, err := p.CS.AppsV1().Deployments(ns).Create(ctx, deployment(name, "runner", 0), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating %s as runner: %w", name, err)
			}
			_, err := p.CS.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType,
				[]byte(`{"spec":{"template":{"spec":{"serviceAccountName":"alice"}}}}`), metav1.PatchOptions{})
			return err
		}, func(p person) string { return "deployments " + ns + "/own-" + p.Name }, identityRule),
	)

	It("TestRunPolicyKeepsTheRecordedRequester: a member's removal of the requester recorded in alice's Deployment template is undone by admission", func() {
		for _, p := range []person{bob, carol} {
			_, err := p.CS.AppsV1().Deployments(ns).Patch(ctx, aliceDeploy, types.MergePatchType,
				[]byte(`{"spec":{"template":{"metadata":{"annotations":{"hub.podium.dev/requester":null}}}}}`), metav1.PatchOptions{})
			if err != nil { // refused outright (podium-run-integrity) is as good as undone
				Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", p.Name, err)
			}
			d, err := clientset.AppsV1().Deployments(ns).Get(ctx, aliceDeploy, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(d.Spec.Template.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User), p.Name)
		}
	})

	It("TestRunPolicyRefusesOrgOwner: the org owner may not run as a member either", func() {
		err := createPod(owner, "owner-as-alice", podSpec("alice", "evil:1"))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(identityRule))
		err = patchImage(owner, "pods", alicePod)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring(integrityRule))
	})

	It("TestRunPolicyAllowsOwnRuns: alice changes her own runs and runs as herself", func() {
		Expect(patchImage(alice, "pods", alicePod)).To(Succeed())
		Expect(patchImage(alice, "pods", aliceJobPod)).To(Succeed())
		Expect(addEphemeral(alice, alicePod)).To(Succeed())
		Expect(patchImage(alice, "deployments", aliceDeploy)).To(Succeed())
		Expect(patchImage(alice, "cronjobs", aliceCron)).To(Succeed())
		Expect(createPod(alice, "alice-as-herself", podSpec("alice", "eval:1"))).To(Succeed())

		By("what admission recorded stays: the Pod still holds alice's delivery")
		pod, err := clientset.CoreV1().Pods(ns).Get(ctx, alicePod, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(pod.Spec.Containers[0].Image).To(Equal("changed-by-alice:1"))
		Expect(pod.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
		Expect(pod.Spec.EphemeralContainers).To(HaveLen(1))
	})

	It("TestRunPolicyAllowsMetadataAndScaling: others may label a run and change what is not its template", func() {
		_, err := bob.CS.CoreV1().Pods(ns).Patch(ctx, alicePod, types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"team":"bobs-label"}}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = carol.CS.AppsV1().Deployments(ns).Patch(ctx, aliceDeploy, types.MergePatchType,
			[]byte(`{"spec":{"minReadySeconds":5}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = bob.CS.BatchV1().CronJobs(ns).Patch(ctx, aliceCron, types.MergePatchType,
			[]byte(`{"spec":{"schedule":"30 0 * * *"}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())

		By("bob scales alice's Deployment: the deployment controller scales its ReplicaSet, whose controller makes the Pod")
		_, err = bob.CS.AppsV1().Deployments(ns).Patch(ctx, aliceAsAlice, types.MergePatchType,
			[]byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		awaitPods(ns, aliceAsAlice, 2)
	})

	It("TestRunPolicyAllowsOrdinaryPods: the default and a workload ServiceAccount with no Podium right are unaffected", func() {
		for _, p := range []person{bob, carol} {
			Expect(createPod(p, "plain-"+p.Name, podSpec("", "tool:1"))).To(Succeed())
			Expect(createPod(p, "runner-"+p.Name, podSpec("runner", "tool:1"))).To(Succeed())
			Expect(patchImage(p, "pods", "plain-"+p.Name)).To(Succeed())
			Expect(addEphemeral(p, "runner-"+p.Name)).To(Succeed())
		}
		_, err := carol.CS.AppsV1().Deployments(ns).Create(ctx, deployment("carol-runner", "runner", 1), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		awaitPods(ns, "carol-runner", 1)
	})

	It("TestRunPolicyAllowsImpersonatorsAndTrustedQueues: impersonate, and change-others on runs", func() {
		Expect(createPod(platform, "platform-as-alice", podSpec("alice", "eval:1"))).To(Succeed())
		Expect(patchImage(queue, "pods", aliceJobPod)).To(Succeed())
	})

	// The delivery webhook puts Podium's recorded keys back on every update of a run that
	// carries them; the integrity policy is the apiserver's own backstop should the
	// webhook not be in the way (a configuration edited by hand). Last in this ordered
	// container: the webhook skips the namespace until the cleanup.
	It("TestRunPolicyBackstop: without the webhook, the apiserver itself refuses a member's change to Podium's recorded keys", func() {
		const skip = "test.podium.dev/no-delivery-webhook"
		// The operator writes the configuration's caBundle too: retried on a conflict.
		setSelector := func(selector func(i int) *metav1.LabelSelector) error {
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur := &admissionregistrationv1.MutatingWebhookConfiguration{}
				if err := k8sClient.Get(ctx, client.ObjectKey{Name: "podium-delivery"}, cur); err != nil {
					return err
				}
				for i := range cur.Webhooks {
					cur.Webhooks[i].NamespaceSelector = selector(i)
				}
				return k8sClient.Update(ctx, cur)
			})
		}
		before := &admissionregistrationv1.MutatingWebhookConfiguration{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "podium-delivery"}, before)).To(Succeed())
		Expect(setSelector(func(int) *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: skip, Operator: metav1.LabelSelectorOpDoesNotExist}}}
		})).To(Succeed())
		DeferCleanup(func() {
			Expect(setSelector(func(i int) *metav1.LabelSelector { return before.Webhooks[i].NamespaceSelector })).To(Succeed())
		})
		_, err := clientset.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"labels":{"`+skip+`":"true"}}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() {
			_, err := clientset.CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"labels":{"`+skip+`":null}}}`), metav1.PatchOptions{})
			Expect(err).NotTo(HaveOccurred())
		})
		Expect(createPod(bob, "unmarked-bob", podSpec("", "tool:1"))).To(Succeed())
		for _, p := range []person{bob, carol} {
			for what, patch := range map[string]string{
				"remove the requester recorded on alice's Pod":   `{"metadata":{"annotations":{"` + hubv1alpha1.AnnotationRequester + `":null}}}`,
				"record oneself as the requester of alice's Pod": `{"metadata":{"annotations":{"` + hubv1alpha1.AnnotationRequester + `":"` + p.User + `"}}}`,
			} {
				Eventually(func(g Gomega) {
					_, err := p.CS.CoreV1().Pods(ns).Patch(ctx, alicePod, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
					g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %s: %v", p.Name, what, err)
					g.Expect(err.Error()).To(ContainSubstring("recorded by admission"))
					g.Expect(err.Error()).To(ContainSubstring("podium-run-integrity"))
				}).Should(Succeed())
			}
			By(p.Name + " marks an unmarked Pod as a run delivered to alice")
			_, err := p.CS.CoreV1().Pods(ns).Patch(ctx, "unmarked-bob", types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"`+hubv1alpha1.AnnotationRequester+`":"`+alice.User+`"},"labels":{"`+hubv1alpha1.LabelRunSecret+`":"`+alicePodRunSecret+`"}}}`), metav1.PatchOptions{})
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%s: %v", p.Name, err)
			Expect(err.Error()).To(ContainSubstring("recorded by admission"))
		}
	})
})

// patchImage sets the image of the container "main" of a Pod, or of the pod template of
// a Deployment or CronJob, to one named after p.
func patchImage(p person, resource, name string) error {
	image := fmt.Sprintf("changed-by-%s:1", p.Name)
	container := fmt.Sprintf(`{"containers":[{"name":"main","image":%q}]}`, image)
	var err error
	switch resource {
	case "pods":
		_, err = p.CS.CoreV1().Pods(p.NS).Patch(ctx, name, types.StrategicMergePatchType, []byte(`{"spec":`+container+`}`), metav1.PatchOptions{})
	case "deployments":
		_, err = p.CS.AppsV1().Deployments(p.NS).Patch(ctx, name, types.StrategicMergePatchType, []byte(`{"spec":{"template":{"spec":`+container+`}}}`), metav1.PatchOptions{})
	case "cronjobs":
		_, err = p.CS.BatchV1().CronJobs(p.NS).Patch(ctx, name, types.StrategicMergePatchType, []byte(`{"spec":{"jobTemplate":{"spec":{"template":{"spec":`+container+`}}}}}`), metav1.PatchOptions{})
	default:
		Fail("patchImage: " + resource)
	}
	return err
}

// addEphemeral adds an ephemeral container named after p to the Pod name (kubectl debug).
func addEphemeral(p person, name string) error {
	pod, err := clientset.CoreV1().Pods(p.NS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug-" + p.Name, Image: "busybox:1"},
	})
	_, err = p.CS.CoreV1().Pods(p.NS).UpdateEphemeralContainers(ctx, name, pod, metav1.UpdateOptions{})
	return err
}

func createPod(p person, name string, spec corev1.PodSpec) error {
	_, err := p.CS.CoreV1().Pods(p.NS).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{})
	return err
}

func deployment(name, sa string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: selector(name),
			Template: corev1.PodTemplateSpec{ObjectMeta: labels(name), Spec: alwaysRestart(podSpec(sa, "eval:1"))},
		},
	}
}

// awaitPods waits until the Deployment ns/name has n Pods (made by its ReplicaSet) and
// returns them.
func awaitPods(ns, name string, n int) []corev1.Pod {
	var pods []corev1.Pod
	EventuallyWithOffset(1, func(g Gomega) {
		var list corev1.PodList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": name})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		pods = list.Items
	}).Should(Succeed())
	return pods
}

func selector(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

func labels(app string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Labels: map[string]string{"app": app}}
}

func alwaysRestart(s corev1.PodSpec) corev1.PodSpec {
	s.RestartPolicy = corev1.RestartPolicyAlways
	return s
}
