package delivery_test

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// newSubmitter is a ServiceAccount of o that may create Pods and workloads there and
// holds no Podium role at all.
func newSubmitter(o org, name string) person {
	token, err := testenv.ServiceAccountToken(ctx, clientset, o.Name, name, "")
	Expect(err).NotTo(HaveOccurred())
	bindRuns(o.Name, o.Name, name)
	cs, w := clientAs(token)
	p := person{User: "system:serviceaccount:" + o.Name + ":" + name, Token: token, CS: cs, warnings: w}
	Eventually(func() error {
		_, err := cs.CoreV1().Pods(o.Name).Create(ctx, pod("rbac-probe", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}).Should(Succeed())
	return p
}

// grant writes, as a platform team would (the admin client), a Secret name in o holding
// value, granted to a new user-scope HostedSecret hsName of owner.
func grant(o org, name, hsName, owner, value string) {
	ExpectWithOffset(1, k8sClient.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: name, Labels: map[string]string{hubv1alpha1.LabelHostedSecret: hsName}},
		Data:       map[string][]byte{"value": []byte(value)},
	})).To(Succeed())
	ExpectWithOffset(1, k8sClient.Create(ctx, &hubv1alpha1.HostedSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: hsName},
		Spec: hubv1alpha1.HostedSecretSpec{Scope: hubv1alpha1.ScopeUser, Owner: owner, EnvVar: "DECLARED_" + strings.ToUpper(strings.ReplaceAll(hsName, "-", "_")),
			SecretRef: hubv1alpha1.SecretValueRef{Name: name}},
	})).To(Succeed())
}

// Ways a Pod reaches a Secret, each on a pod spec.
func envRefTo(name, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: "STOLEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}}}
}

func withEnv(name, key string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) { s.Containers[0].Env = append(s.Containers[0].Env, envRefTo(name, key)) }
}

func withInitEnv(name, key string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.InitContainers = append(s.InitContainers, corev1.Container{Name: "init", Image: "busybox", Env: []corev1.EnvVar{envRefTo(name, key)}})
	}
}

func withEnvFrom(name string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Containers[0].EnvFrom = append(s.Containers[0].EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}})
	}
}

func withVolume(v corev1.VolumeSource) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: "stolen", VolumeSource: v})
		s.Containers[0].VolumeMounts = append(s.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "stolen", MountPath: "/stolen"})
	}
}

func secretVolume(name string) func(*corev1.PodSpec) {
	return withVolume(corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}})
}

func projectedVolume(name string) func(*corev1.PodSpec) {
	return withVolume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}}})
}

func csiVolume(name string) func(*corev1.PodSpec) {
	return withVolume(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "secrets.example.com",
		NodePublishSecretRef: &corev1.LocalObjectReference{Name: name}}})
}

func withPull(name string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.ImagePullSecrets = append(s.ImagePullSecrets, corev1.LocalObjectReference{Name: name})
	}
}

func podSpec(mods ...func(*corev1.PodSpec)) corev1.PodSpec {
	s := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "agent", Image: "busybox"}}}
	for _, m := range mods {
		m(&s)
	}
	return s
}

func podTemplate(mods ...func(*corev1.PodSpec)) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "stolen"}}, Spec: podSpec(mods...)}
}

func alwaysRestart(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	t.Spec.RestartPolicy = corev1.RestartPolicyAlways
	return t
}

// Kinds an attacker can put a pod spec into; each creates one object as cs in ns.
type creator func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error

var (
	asPod creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "stolen-"}, Spec: podSpec(mods...)}, metav1.CreateOptions{})
		return err
	}
	asJob creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		_, err := cs.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{GenerateName: "stolen-"},
			Spec: batchv1.JobSpec{Template: podTemplate(mods...)}}, metav1.CreateOptions{})
		return err
	}
	asCronJob creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		_, err := cs.BatchV1().CronJobs(ns).Create(ctx, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{GenerateName: "stolen-"},
			Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: podTemplate(mods...)}}}}, metav1.CreateOptions{})
		return err
	}
	selector             = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "stolen"}}
	asDeployment creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		_, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{GenerateName: "stolen-"},
			Spec: appsv1.DeploymentSpec{Selector: selector, Template: alwaysRestart(podTemplate(mods...))}}, metav1.CreateOptions{})
		return err
	}
	asReplicaSet creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		_, err := cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{GenerateName: "stolen-"},
			Spec: appsv1.ReplicaSetSpec{Selector: selector, Template: alwaysRestart(podTemplate(mods...))}}, metav1.CreateOptions{})
		return err
	}
	asStatefulSet creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		_, err := cs.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{GenerateName: "stolen-"},
			Spec: appsv1.StatefulSetSpec{Selector: selector, Template: alwaysRestart(podTemplate(mods...))}}, metav1.CreateOptions{})
		return err
	}
	asDaemonSet creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		_, err := cs.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{GenerateName: "stolen-"},
			Spec: appsv1.DaemonSetSpec{Selector: selector, Template: alwaysRestart(podTemplate(mods...))}}, metav1.CreateOptions{})
		return err
	}
	asReplicationController creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		t := alwaysRestart(podTemplate(mods...))
		_, err := cs.CoreV1().ReplicationControllers(ns).Create(ctx, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{GenerateName: "stolen-"},
			Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"app": "stolen"}, Template: &t}}, metav1.CreateOptions{})
		return err
	}
	asPodTemplate creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		_, err := cs.CoreV1().PodTemplates(ns).Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{GenerateName: "stolen-"},
			Template: podTemplate(mods...)}, metav1.CreateOptions{})
		return err
	}
	// asDeploymentUpdate creates a harmless Deployment, then adds the reference with an
	// update.
	asDeploymentUpdate creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		d, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{GenerateName: "harmless-"},
			Spec: appsv1.DeploymentSpec{Selector: selector, Replicas: ptr.To[int32](0), Template: alwaysRestart(podTemplate())}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		for {
			for _, m := range mods {
				m(&d.Spec.Template.Spec)
			}
			_, err = cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
			if !apierrors.IsConflict(err) { // the Deployment controller wrote its status meanwhile
				return err
			}
			d, err = cs.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
	}
	// asEphemeral creates a harmless Pod, then adds an ephemeral container holding the
	// reference (its first container's env and envFrom).
	asEphemeral creator = func(cs *kubernetes.Clientset, ns string, mods ...func(*corev1.PodSpec)) error {
		p, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "harmless-"}, Spec: podSpec()}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		return addEphemeral(cs, p, mods...)
	}
)

func addEphemeral(cs *kubernetes.Clientset, p *corev1.Pod, mods ...func(*corev1.PodSpec)) error {
	s := podSpec(mods...)
	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: fmt.Sprintf("debug-%d", len(p.Spec.EphemeralContainers)), Image: "busybox", Env: s.Containers[0].Env, EnvFrom: s.Containers[0].EnvFrom}})
	_, err := cs.CoreV1().Pods(p.Namespace).UpdateEphemeralContainers(ctx, p.Name, p, metav1.UpdateOptions{})
	return err
}

// refusedBy expects err to be an admission refusal naming rule and none of values.
func refusedBy(err error, rule string, values ...string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred(), "admitted; want refused by %s", rule)
	Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	Expect(err.Error()).To(ContainSubstring(rule))
	for _, v := range values {
		Expect(err.Error()).NotTo(ContainSubstring(v))
	}
}

// The run Secret isolation table (docs/design/threat-model.md, "Threat model"): every way of issue
// vectors 1-3 and 6 a member with the right to create Pods and workloads (mallory) and a
// Pod creator with no Podium role (nora) have to name another run's Secret, a Secret
// granted to a hosted secret, or the registry credentials of their own run Secret is
// refused, naming the object and the rule and no value; alice's own Pod, Job,
// Deployment and CronJob still get her key, through the real workload controllers.
var _ = Describe("Run Secret isolation", Ordered, ContinueOnFailure, func() {
	var acme org
	var alice, mallory, nora person
	var aliceRun, granted string
	const aliceValue, grantedValue = "sk-ant-alice-isolation-000000000001", "declared-value-isolation-000000002"
	const registryPassword = "ghp_isolation-registry-token-0003"

	BeforeAll(func() {
		acme = newOrg("isolation")
		alice, mallory, nora = newPerson(acme, "alice"), newPerson(acme, "mallory"), newSubmitter(acme, "nora")
		store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": aliceValue, "provider": "anthropic"})
		code, body := call(alice, http.MethodPost, "/v1/registry-credentials", map[string]any{
			"display_name": "GHCR bot", "registry_host": "ghcr.io", "username": "bot", "password": registryPassword})
		Expect(code).To(Equal(http.StatusCreated), string(body))

		By("alice's Job: its run Secret's name is on its label, readable by every member")
		j := job("alice-job", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"})
		created, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, j, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		aliceRun = created.Labels[hubv1alpha1.LabelRunSecret]
		Expect(aliceRun).To(HavePrefix("podium-run-"))

		By("a Secret a platform team granted to a HostedSecret of alice (the declarative form), under a reserved name")
		granted = "podium-granted-alice-declared"
		grant(acme, granted, "alice-declared", alice.User, grantedValue)
	})

	attackers := func() []person { return []person{mallory, nora} }

	DescribeTable("refuses another run's Secret",
		func(create creator, how func(string) func(*corev1.PodSpec), rule string) {
			for _, p := range attackers() {
				By(p.User)
				refusedBy(create(p.CS, acme.Name, how(aliceRun)), rule, aliceValue)
			}
		},
		Entry("vector 1: Pod env secretKeyRef", asPod, func(n string) func(*corev1.PodSpec) { return withEnv(n, "ANTHROPIC_API_KEY") }, "podium-run-binding"),
		Entry("vector 1: Pod init container env", asPod, func(n string) func(*corev1.PodSpec) { return withInitEnv(n, "ANTHROPIC_API_KEY") }, "podium-run-binding"),
		Entry("vector 1: Pod envFrom", asPod, withEnvFrom, "podium-run-reach"),
		Entry("vector 1: Pod secret volume", asPod, secretVolume, "podium-run-reach"),
		Entry("vector 1: Pod projected volume", asPod, projectedVolume, "podium-run-reach"),
		Entry("vector 1: Pod CSI volume's node publish secret", asPod, csiVolume, "podium-run-reach"),
		Entry("vector 1: Pod imagePullSecrets", asPod, withPull, "podium-run-binding"),
		Entry("vector 1: ephemeral container env", asEphemeral, func(n string) func(*corev1.PodSpec) { return withEnv(n, "ANTHROPIC_API_KEY") }, "podium-run-binding"),
		Entry("vector 1: ephemeral container envFrom", asEphemeral, withEnvFrom, "podium-run-reach"),
		Entry("vector 2: Job template", asJob, func(n string) func(*corev1.PodSpec) { return withEnv(n, "ANTHROPIC_API_KEY") }, "podium-run-binding"),
		Entry("vector 2: CronJob template", asCronJob, func(n string) func(*corev1.PodSpec) { return withEnv(n, "ANTHROPIC_API_KEY") }, "podium-run-binding"),
		Entry("vector 2: Deployment template", asDeployment, func(n string) func(*corev1.PodSpec) { return withEnv(n, "ANTHROPIC_API_KEY") }, "podium-run-binding"),
		Entry("vector 2: Deployment template, by update", asDeploymentUpdate, func(n string) func(*corev1.PodSpec) { return withEnv(n, "ANTHROPIC_API_KEY") }, "podium-run-binding"),
		Entry("vector 2: ReplicaSet template", asReplicaSet, func(n string) func(*corev1.PodSpec) { return withEnv(n, "ANTHROPIC_API_KEY") }, "podium-run-binding"),
		Entry("vector 2: StatefulSet template", asStatefulSet, secretVolume, "podium-run-reach"),
		Entry("vector 2: DaemonSet template", asDaemonSet, func(n string) func(*corev1.PodSpec) { return withEnv(n, "ANTHROPIC_API_KEY") }, "podium-run-binding"),
		Entry("vector 2: ReplicationController template", asReplicationController, func(n string) func(*corev1.PodSpec) { return withEnv(n, "ANTHROPIC_API_KEY") }, "podium-run-binding"),
		Entry("vector 2: PodTemplate", asPodTemplate, projectedVolume, "podium-run-reach"),
	)

	It("vector 3: refuses a Pod carrying forged Podium metadata and alice's run Secret", func() {
		for _, p := range attackers() {
			forged := pod("", map[string]string{hubv1alpha1.AnnotationRequester: alice.User, hubv1alpha1.AnnotationDelivered: "ANTHROPIC_API_KEY"})
			forged.GenerateName = "forged-"
			forged.Labels = map[string]string{hubv1alpha1.LabelRunSecret: aliceRun}
			forged.Spec.Containers[0].Env = []corev1.EnvVar{envRefTo(aliceRun, "ANTHROPIC_API_KEY")}
			_, err := p.CS.CoreV1().Pods(acme.Name).Create(ctx, forged, metav1.CreateOptions{})
			refusedBy(err, "podium-run-binding", aliceValue)
			Expect(err.Error()).To(ContainSubstring("Pod " + acme.Name + "/forged-"))
		}
	})

	DescribeTable("refuses a Secret granted to a hosted secret",
		func(create creator, how func(string) func(*corev1.PodSpec)) {
			for _, p := range attackers() {
				By(p.User)
				refusedBy(create(p.CS, acme.Name, how(granted)), "podium-granted-secret", grantedValue)
			}
		},
		Entry("Pod env secretKeyRef", asPod, func(n string) func(*corev1.PodSpec) { return withEnv(n, "value") }),
		Entry("Pod envFrom", asPod, withEnvFrom),
		Entry("Pod secret volume", asPod, secretVolume),
		Entry("Pod projected volume", asPod, projectedVolume),
		Entry("Pod imagePullSecrets", asPod, withPull),
		Entry("ephemeral container", asEphemeral, func(n string) func(*corev1.PodSpec) { return withEnv(n, "value") }),
		Entry("Deployment template", asDeployment, secretVolume),
		Entry("CronJob template", asCronJob, func(n string) func(*corev1.PodSpec) { return withInitEnv(n, "value") }),
		Entry("Job template", asJob, withEnvFrom),
	)

	It("refuses a Pod naming a granted Secret's name before that Secret exists (it would get the value once written)", func() {
		for _, p := range attackers() {
			By(p.User)
			refusedBy(asPod(p.CS, acme.Name, withEnv("podium-granted-not-written-yet", "value")), "podium-granted-secret", grantedValue)
			refusedBy(asDeployment(p.CS, acme.Name, secretVolume("podium-granted-not-written-yet")), "podium-granted-secret", grantedValue)
		}
	})

	It("keeps new grants to reserved names (rule podium-granted-secret-name), for whoever may write Secrets", func() {
		By("pat, of the platform team, may create and update Secrets in the org namespace")
		Expect(k8sClient.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "secret-writer"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create", "update"}}}})).To(Succeed())
		tokenPat, err := testenv.ServiceAccountToken(ctx, clientset, acme.Name, "pat", "")
		Expect(err).NotTo(HaveOccurred())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "pat-secret-writer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "secret-writer"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "pat", Namespace: acme.Name}}})).To(Succeed())
		pat, _ := clientAs(tokenPat)
		labelled := func(name string) *corev1.Secret {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: name,
				Labels: map[string]string{hubv1alpha1.LabelHostedSecret: "pats-token"}}, Data: map[string][]byte{"value": []byte(grantedValue)}}
		}
		By("a labelled Secret under a name any Pod may mount: refused, 422, naming the label and the name to use")
		var refused error
		Eventually(func() error {
			_, refused = pat.CoreV1().Secrets(acme.Name).Create(ctx, labelled("pats-token"), metav1.CreateOptions{})
			return refused
		}).Should(MatchError(ContainSubstring("podium-granted-secret-name")))
		Expect(apierrors.IsInvalid(refused)).To(BeTrue(), "%v", refused)
		Expect(refused.Error()).To(And(ContainSubstring("metadata.labels[hub.podium.dev/hosted-secret]"), ContainSubstring("podium-granted-<name>"),
			Not(ContainSubstring(grantedValue))))
		By("the label added later by an update: refused the same way")
		plain := labelled("pats-plain")
		plain.Labels = nil
		_, err = pat.CoreV1().Secrets(acme.Name).Create(ctx, plain, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		plain.Labels = map[string]string{hubv1alpha1.LabelHostedSecret: "pats-token"}
		_, err = pat.CoreV1().Secrets(acme.Name).Update(ctx, plain, metav1.UpdateOptions{})
		Expect(err).To(MatchError(ContainSubstring("podium-granted-secret-name")))
		By("the reserved name: admitted, and no Pod may name it")
		_, err = pat.CoreV1().Secrets(acme.Name).Create(ctx, labelled("podium-granted-pats-token"), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		refusedBy(asPod(mallory.CS, acme.Name, withEnv("podium-granted-pats-token", "value")), "podium-granted-secret", grantedValue)
	})

	It("refuses a grant made before names were reserved once the operator recorded it on its namespace", func() {
		By("a legacy grant (made before the rule, as a restore brings it back) under a name any Pod may mount")
		const legacy = "alice-legacy-declared"
		grant(acme, legacy, legacy, alice.User, grantedValue)
		Eventually(func(g Gomega) {
			ns := &corev1.Namespace{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: acme.Name}, ns)).To(Succeed())
			g.Expect(strings.Split(ns.Annotations[hubv1alpha1.AnnotationGrantedSecrets], ",")).To(ContainElement(legacy))
		}).Should(Succeed())
		By("refused by podium-run-isolation's list, everywhere a Pod reads a Secret")
		for _, p := range attackers() {
			for _, how := range []func(string) func(*corev1.PodSpec){
				func(n string) func(*corev1.PodSpec) { return withEnv(n, "value") }, withEnvFrom, secretVolume, projectedVolume, withPull, csiVolume,
			} {
				err := asPod(p.CS, acme.Name, how(legacy))
				refusedBy(err, "podium-granted-secret", grantedValue)
				Expect(err.Error()).To(ContainSubstring("podium-run-isolation"))
			}
			refusedBy(asCronJob(p.CS, acme.Name, withInitEnv(legacy, "value")), "podium-granted-secret", grantedValue)
			refusedBy(asDeployment(p.CS, acme.Name, secretVolume(legacy)), "podium-granted-secret", grantedValue)
		}
	})

	It("vector 6: keeps the registry credentials of one's own run Secret from every container", func() {
		for _, p := range attackers() {
			By(p.User + " asks for the org's registry credential on a Pod of their own")
			mine := pod("", map[string]string{hubv1alpha1.AnnotationRegistryCredentials: "GHCR bot"})
			mine.GenerateName = "pull-"
			own, err := p.CS.CoreV1().Pods(acme.Name).Create(ctx, mine, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			run := own.Labels[hubv1alpha1.LabelRunSecret]
			Expect(run).To(HavePrefix("podium-run-"))
			Expect(own.Spec.ImagePullSecrets).To(ContainElement(corev1.LocalObjectReference{Name: run}))

			By("the registry password by env, envFrom or a volume of another Pod")
			refusedBy(asPod(p.CS, acme.Name, withEnv(run, corev1.DockerConfigJsonKey)), "podium-run-reach", registryPassword)
			refusedBy(asPod(p.CS, acme.Name, withEnvFrom(run)), "podium-run-reach", registryPassword)
			refusedBy(asPod(p.CS, acme.Name, secretVolume(run)), "podium-run-reach", registryPassword)
			By("or of the Pod itself, through an ephemeral container")
			refusedBy(addEphemeral(p.CS, own, withEnv(run, corev1.DockerConfigJsonKey)), "podium-run-reach", registryPassword)
			refusedBy(addEphemeral(p.CS, own, withEnvFrom(run)), "podium-run-reach", registryPassword)
			By("nor by a second Pod naming it in imagePullSecrets: it is another run's Secret")
			refusedBy(asPod(p.CS, acme.Name, withPull(run)), "podium-run-binding", registryPassword)
		}
	})

	// runKeyOf is the value of ANTHROPIC_API_KEY in the run Secret a pod spec reads it from.
	runKeyOf := func(g Gomega, spec corev1.PodSpec) string {
		ref := envRef(spec.Containers[0], "ANTHROPIC_API_KEY")
		g.Expect(ref).NotTo(BeNil(), "no ANTHROPIC_API_KEY reference")
		s := &corev1.Secret{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: ref.Name}, s)).To(Succeed())
		return string(s.Data["ANTHROPIC_API_KEY"])
	}
	ask := map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}
	podsOf := func(g Gomega, selector string) []corev1.Pod {
		list, err := clientset.CoreV1().Pods(acme.Name).List(ctx, metav1.ListOptions{LabelSelector: selector})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(list.Items).NotTo(BeEmpty(), "no Pod yet")
		return list.Items
	}

	It("still delivers alice's key to her own Pod and to the Pods of her Job", func() {
		p := pod("alice-pod", ask)
		created, err := alice.CS.CoreV1().Pods(acme.Name).Create(ctx, p, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		// Written once the Pod is stored, a moment after its admission answered.
		Eventually(func(g Gomega) string { return runKeyOf(g, created.Spec) }).Should(Equal(aliceValue))

		j := job("alice-real-job", ask)
		j.Spec.ManagedBy = nil // the real Job controller makes its Pod
		j.Spec.Template.Spec.InitContainers = nil
		j.Spec.Template.Labels = map[string]string{"run": "alice-real-job"}
		_, err = alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, j, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			pods := podsOf(g, "run=alice-real-job")
			g.Expect(pods[0].Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
			g.Expect(runKeyOf(g, pods[0].Spec)).To(Equal(aliceValue))
		}).Should(Succeed())
	})

	It("delivers alice's key to each Pod of her Deployment; only she may change its template", func() {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "alice-deploy"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"run": "alice-deploy"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"run": "alice-deploy"}, Annotations: ask},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "busybox"}}},
			},
		}}
		created, err := alice.CS.AppsV1().Deployments(acme.Name).Create(ctx, d, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(created.Spec.Template.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
		Eventually(func(g Gomega) {
			pods := podsOf(g, "run=alice-deploy")
			g.Expect(pods[0].Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
			g.Expect(pods[0].Labels).To(HaveKey(hubv1alpha1.LabelRunSecret))
			g.Expect(runKeyOf(g, pods[0].Spec)).To(Equal(aliceValue))
		}).Should(Succeed())

		By("mallory may not change the template of alice's delivered Deployment (podium-run-integrity)")
		_, err = mallory.CS.AppsV1().Deployments(acme.Name).Patch(ctx, "alice-deploy", types.StrategicMergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"attacker/image"}]}}}}`), metav1.PatchOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("podium-run-integrity"))

		By("alice changes her own template: the Pods made from it are still her runs, with her key")
		Eventually(func() error {
			cur, err := alice.CS.AppsV1().Deployments(acme.Name).Get(ctx, "alice-deploy", metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Spec.Template.Spec.Containers[0].Image = "busybox:stable"
			cur.Spec.Template.Annotations[hubv1alpha1.AnnotationRequester] = mallory.User // forged: replaced
			_, err = alice.CS.AppsV1().Deployments(acme.Name).Update(ctx, cur, metav1.UpdateOptions{})
			return err
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			for _, p := range podsOf(g, "run=alice-deploy") {
				if p.Spec.Containers[0].Image == "busybox:stable" {
					g.Expect(p.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
					g.Expect(runKeyOf(g, p.Spec)).To(Equal(aliceValue))
					return
				}
			}
			g.Expect("no Pod of the new template yet").To(BeEmpty())
		}).Should(Succeed())
	})

	It("delivers alice's key to the Jobs her CronJob's controller creates", func() {
		cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "alice-cron"}, Spec: batchv1.CronJobSpec{
			Schedule: "* * * * *",
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: ask, Labels: map[string]string{"run": "alice-cron"}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"run": "alice-cron"}},
					Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "agent", Image: "busybox"}}},
				}},
			},
		}}
		_, err := alice.CS.BatchV1().CronJobs(acme.Name).Create(ctx, cj, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		// The CronJob controller creates a Job at the next minute.
		Eventually(func(g Gomega) {
			jobs, err := clientset.BatchV1().Jobs(acme.Name).List(ctx, metav1.ListOptions{LabelSelector: "run=alice-cron"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(jobs.Items).NotTo(BeEmpty(), "no Job yet")
			j := jobs.Items[0]
			g.Expect(j.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationRequester, alice.User))
			g.Expect(j.Labels[hubv1alpha1.LabelRunSecret]).To(HavePrefix("podium-run-"))
			g.Expect(runKeyOf(g, j.Spec.Template.Spec)).To(Equal(aliceValue))
			pods := podsOf(g, "run=alice-cron")
			g.Expect(runKeyOf(g, pods[0].Spec)).To(Equal(aliceValue))
		}).WithTimeout(150 * time.Second).Should(Succeed())
	})

	It("vector 7: purge and delete remove a value from the run Secret of a Job that has not started", func() {
		bob := newPerson(acme, "bob")
		store(bob, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-openai-bob-isolation-0000001"})
		store(bob, map[string]any{"env_var": "GROQ_API_KEY", "value": "gsk-bob-isolation-0000000000002"})
		j := job("bob-pending", map[string]string{hubv1alpha1.AnnotationSecrets: "OPENAI_API_KEY,GROQ_API_KEY"})
		created, err := bob.CS.BatchV1().Jobs(acme.Name).Create(ctx, j, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		name := created.Labels[hubv1alpha1.LabelRunSecret]
		Expect(runSecret(acme.Name, name).Data).To(HaveKey("OPENAI_API_KEY"))

		By("a purge over HTTP")
		code, body := call(bob, http.MethodDelete, "/v1/secrets", map[string]any{"env_var": "OPENAI_API_KEY", "purge": true})
		Expect(code).To(Equal(http.StatusOK), string(body))
		Eventually(func() map[string][]byte { return runSecret(acme.Name, name).Data }).WithTimeout(10 * time.Second).ShouldNot(HaveKey("OPENAI_API_KEY"))

		By("kubectl delete hostedsecret")
		list := &hubv1alpha1.HostedSecretList{}
		Expect(k8sClient.List(ctx, list, client.InNamespace(acme.Name))).To(Succeed())
		for i := range list.Items {
			if list.Items[i].Spec.EnvVar == "GROQ_API_KEY" {
				Expect(k8sClient.Delete(ctx, &list.Items[i])).To(Succeed())
			}
		}
		Eventually(func() map[string][]byte { return runSecret(acme.Name, name).Data }).WithTimeout(10 * time.Second).ShouldNot(HaveKey("GROQ_API_KEY"))
	})
})
