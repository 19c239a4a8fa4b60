package secrets_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

// The org owner (the shipped podium-org-owner role, which holds manage-others) against a
// member's job-scope secret: a job-scope secret is delivered to the runs of whoever
// stored it, recorded in hub.podium.dev/created-by, so that annotation is immutable
// for everyone but a restore identity (docs/secrets.md, "Ownership: who may do what").
// The owner may revoke or delete a member's secret, never become its owner.

// mayRunPods lets p create Pods in o (a grant beyond the sample roles: platforms give
// it to whoever launches runs).
func mayRunPods(o org, p person) {
	GinkgoHelper()
	sa := strings.Split(p.User, ":")
	name := "runs-" + sa[3]
	Expect(k8sClient.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: name},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}},
	})).To(Succeed())
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa[2], Name: sa[3]}},
	})).To(Succeed())
}

// runAs has p create a bare Pod asking for envVar of job jobID, as a run does, and
// returns the Pod as admitted (hub.podium.dev/delivered names what it was given) and the
// warnings the apiserver sent back.
func runAs(o org, p person, name, envVar, jobID string) (*corev1.Pod, []string) {
	GinkgoHelper()
	w := &warningRecorder{}
	pc := rest.AnonymousClientConfig(cfg)
	pc.BearerToken = p.Token
	pc.WarningHandler = w
	cs, err := kubernetes.NewForConfig(pc)
	Expect(err).NotTo(HaveOccurred())
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			hubv1alpha1.AnnotationSecrets: envVar,
			hubv1alpha1.AnnotationJobID:   jobID,
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	created, err := cs.CoreV1().Pods(o.Name).Create(ctx, pod, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return created, w.msgs
}

// applyRestorerRole creates the ClusterRole shipped in config/rbac/restorer_role.yaml
// (once per control plane), so that the restore identity is the real one.
func applyRestorerRole() {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "restorer_role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	role := &rbacv1.ClusterRole{}
	Expect(yaml.UnmarshalStrict(data, role)).To(Succeed())
	Expect(role.Name).To(Equal("podium-restorer"))
	if err := k8sClient.Create(ctx, role); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
}

// jobSecret is a job-scope HostedSecret as kubectl applies it, recorded as stored by
// createdBy ("" records nobody).
func jobSecret(o org, name, envVar, createdBy string) *hubv1alpha1.HostedSecret {
	hs := &hubv1alpha1.HostedSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: name},
		Spec: hubv1alpha1.HostedSecretSpec{Scope: hubv1alpha1.ScopeJob, JobID: jobA, EnvVar: envVar,
			SecretRef: hubv1alpha1.SecretValueRef{Name: name}},
	}
	if createdBy != "" {
		hs.Annotations = map[string]string{hubv1alpha1.AnnotationCreatedBy: createdBy}
	}
	return hs
}

// setCreatedBy sets (or, for "", removes) the created-by annotation of the HostedSecret
// named like hs, as c, on the object as it is now (the operator writes it too: its
// recorded id).
func setCreatedBy(c client.Client, hs *hubv1alpha1.HostedSecret, to string) error {
	return testenv.Update(ctx, c, hs.DeepCopy(), func(cur *hubv1alpha1.HostedSecret) {
		if to == "" {
			delete(cur.Annotations, hubv1alpha1.AnnotationCreatedBy)
			return
		}
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[hubv1alpha1.AnnotationCreatedBy] = to
	})
}

var _ = Describe("The recorded creator of a hosted secret", func() {
	var (
		acme         org
		owner, alice person
	)
	BeforeEach(func() {
		acme = newOrg("creator")
		owner = newPerson(acme, "owner", "podium-org-owner")
		alice = newPerson(acme, "alice", "podium-org-member")
	})

	storeJob := func(p person, env, value string) *hubv1alpha1.HostedSecret {
		GinkgoHelper()
		code, body := store(p, map[string]any{"env_var": env, "value": value, "scope": "job", "job_id": jobA})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		hs := hostedSecret(acme, decode[record](body).ID)
		Expect(hs).NotTo(BeNil())
		Expect(hs.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedBy, alice.User))
		return hs
	}

	It("the org owner cannot make a member's job-scope secret his: his run with her job id does not get her value", func() {
		mayRunPods(acme, owner)
		mayRunPods(acme, alice)
		theirs := storeJob(alice, "JOB_KEY", "sk-alice-job-only-0123456789")
		o := kubectlAs(owner)

		By("the attack: the owner records himself as its creator, then runs a Pod naming her job")
		rewrite := setCreatedBy(o, theirs, owner.User)
		pod, warnings := runAs(acme, owner, "owner-run", "JOB_KEY", jobA)
		Expect(strings.Split(pod.Annotations[hubv1alpha1.AnnotationDelivered], ",")).NotTo(ContainElement("JOB_KEY"),
			"the owner's run was given alice's job-scope value")
		Expect(warnings).To(ContainElement(ContainSubstring("JOB_KEY of job " + jobA + " was stored by another user")))
		byPolicy(rewrite, "created-by")

		By("nor by removing the record, or writing it with a patch")
		byPolicy(setCreatedBy(o, theirs, ""), "created-by")
		patch := []byte(`{"metadata":{"annotations":{"` + hubv1alpha1.AnnotationCreatedBy + `":"` + owner.User + `"}}}`)
		byPolicy(o.Patch(ctx, theirs.DeepCopy(), client.RawPatch("application/merge-patch+json", patch)), "created-by")

		By("nor by moving it to another job or scope (the CRD keeps them)")
		for _, change := range []func(*hubv1alpha1.HostedSecret){
			func(hs *hubv1alpha1.HostedSecret) { hs.Spec.JobID = "0a1b2c3d-0000-4000-8000-000000000001" },
			func(hs *hubv1alpha1.HostedSecret) { hs.Spec.JobID = strings.ToUpper(jobA) },
			func(hs *hubv1alpha1.HostedSecret) {
				hs.Spec.Scope, hs.Spec.JobID, hs.Spec.Owner = hubv1alpha1.ScopeUser, "", owner.User
			},
		} {
			err := testenv.Update(ctx, o, theirs.DeepCopy(), change)
			Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "want a refusal, got %v", err)
		}

		By("it is still hers: her run gets it, and it stays recorded as hers")
		mine, _ := runAs(acme, alice, "alice-run", "JOB_KEY", jobA)
		Expect(strings.Split(mine.Annotations[hubv1alpha1.AnnotationDelivered], ",")).To(ContainElement("JOB_KEY"))
		cur := hostedSecret(acme, string(theirs.UID))
		Expect(cur.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedBy, alice.User))

		By("the owner may still revoke it, and delete it")
		Expect(revoke(owner, map[string]any{"scope": "job", "job_id": jobA, "env_var": "JOB_KEY"})).To(Equal(1))
		Expect(o.Delete(ctx, cur)).To(Succeed())
	})

	It("what else says whose a secret is stays too: a user-scope secret's owner, and its scope", func() {
		code, body := store(alice, map[string]any{"env_var": "USER_KEY", "value": "sk-alice-user-only-0123456789"})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		hers := hostedSecret(acme, decode[record](body).ID)
		o := kubectlAs(owner)
		for _, change := range []func(*hubv1alpha1.HostedSecret){
			func(hs *hubv1alpha1.HostedSecret) { hs.Spec.Owner = owner.User },
			func(hs *hubv1alpha1.HostedSecret) {
				hs.Spec.Scope, hs.Spec.Owner, hs.Spec.JobID = hubv1alpha1.ScopeJob, "", jobA
			},
		} {
			err := testenv.Update(ctx, o, hers.DeepCopy(), change)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want the CRD's refusal, got %v", err)
		}
		Expect(hostedSecret(acme, string(hers.UID)).Spec.Owner).To(Equal(alice.User))
	})

	It("the org owner cannot create a job-scope secret recorded as a member's (his value in her runs)", func() {
		o := kubectlAs(owner)
		byPolicy(o.Create(ctx, jobSecret(acme, "planted-for-alice", "PLANT_KEY", alice.User)), "created-by")
		By("his own name, or none, he may")
		Expect(o.Create(ctx, jobSecret(acme, "owners-own", "PLANT_KEY", owner.User))).To(Succeed())
		Expect(o.Create(ctx, jobSecret(acme, "nobodys", "NONE_KEY", ""))).To(Succeed())
		By("as alice may record her own name")
		Expect(kubectlAs(alice).Create(ctx, jobSecret(acme, "alices-own", "OWN_KEY", alice.User))).To(Succeed())
	})

	It("nobody adds a creator to a secret that had none: not the org owner, not a GitOps identity allowed to update", func() {
		o := kubectlAs(owner)
		Expect(o.Create(ctx, jobSecret(acme, "nobodys", "NONE_KEY", ""))).To(Succeed())
		nobodys := jobSecret(acme, "nobodys", "NONE_KEY", "")
		byPolicy(setCreatedBy(o, nobodys, alice.User), "created-by")
		byPolicy(setCreatedBy(o, nobodys, owner.User), "created-by")

		deployer := newPerson(acme, "deployer", "")
		Expect(k8sClient.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "deployer"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{hubv1alpha1.GroupVersion.Group}, Resources: []string{"hostedsecrets"},
				Verbs: []string{"get", "create", "update", "patch"}}},
		})).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "deployer"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deployer"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: acme.Name, Name: "deployer"}},
		})).To(Succeed())
		Eventually(func(g Gomega) { // until the apiserver's RBAC sees the new binding
			err := setCreatedBy(kubectlAs(deployer), nobodys, deployer.User)
			g.Expect(err).To(MatchError(ContainSubstring("podium-hostedsecret-ownership")))
			g.Expect(err).To(MatchError(ContainSubstring("created-by")))
		}).Should(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(nobodys), nobodys)).To(Succeed())
		Expect(nobodys.Annotations).NotTo(HaveKey(hubv1alpha1.AnnotationCreatedBy))
	})

	It("the org owner may delete a member's job-scope secret, not create it again under her name", func() {
		o := kubectlAs(owner)
		theirs := storeJob(alice, "AGAIN_KEY", "sk-alice-again-0123456789")
		Expect(o.Delete(ctx, theirs.DeepCopy())).To(Succeed())
		again := jobSecret(acme, theirs.Name, "AGAIN_KEY", alice.User)
		again.Spec.SecretRef = *theirs.Spec.SecretRef.DeepCopy()
		again.Spec.SecretRef.Namespace = "" // (placing it in the value namespace needs place-values)
		var err error
		Eventually(func() bool { // until the old object is gone
			err = o.Create(ctx, again.DeepCopy())
			return apierrors.IsAlreadyExists(err)
		}).Should(BeFalse())
		byPolicy(err, "created-by")
	})

	It("the restore identity (podium-restorer) re-creates and corrects records as they were", func() {
		applyRestorerRole()
		r := kubectlAs(newPerson(acme, "velero", "podium-restorer"))
		restored := jobSecret(acme, "restored-for-alice", "RESTORED_KEY", alice.User)
		Expect(r.Create(ctx, restored)).To(Succeed())
		Expect(hostedSecret(acme, string(restored.UID)).Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationCreatedBy, alice.User))

		Expect(k8sClient.Create(ctx, jobSecret(acme, "nobodys", "NONE_KEY", ""))).To(Succeed())
		Expect(setCreatedBy(r, jobSecret(acme, "nobodys", "NONE_KEY", ""), alice.User)).To(Succeed())
		Expect(setCreatedBy(r, restored, "")).To(Succeed())
	})
})
