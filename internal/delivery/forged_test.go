package delivery_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/delivery"
)

// forge POSTs, with no credentials, an AdmissionReview of the create of obj (a Pod or a
// Job) in ns by user straight to the operator's webhook server, as anyone who reaches
// its port can, and returns the answer.
func forge(ns, user string, obj runtime.Object, dry bool) *admissionv1.AdmissionResponse {
	raw, err := json.Marshal(obj)
	Expect(err).NotTo(HaveOccurred())
	req := &admissionv1.AdmissionRequest{
		UID: types.UID(uuid.NewString()), Namespace: ns, Operation: admissionv1.Create,
		UserInfo: authenticationv1.UserInfo{Username: user},
		Object:   runtime.RawExtension{Raw: raw}, DryRun: ptr.To(dry),
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		req.Name = o.Name
		req.Kind = metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
		req.Resource = metav1.GroupVersionResource{Version: "v1", Resource: "pods"}
	default:
		req.Name = obj.(client.Object).GetName()
		req.Kind = metav1.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
		req.Resource = metav1.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	}
	body, err := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req,
	})
	Expect(err).NotTo(HaveOccurred())
	// The caller checks no certificate and presents none: it is not the apiserver.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the attacker's client
	resp, err := hc.Post(op.WebhookURL, "application/json", bytes.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK), string(out))
	review := &admissionv1.AdmissionReview{}
	Expect(json.Unmarshal(out, review)).To(Succeed())
	Expect(review.Response).NotTo(BeNil())
	return review.Response
}

var runSecretName = regexp.MustCompile(`podium-run-[a-z0-9]{12}`)

var _ = Describe("Forged admission reviews", func() {
	var acme org
	var alice person
	var aliceKey record
	const aliceValue = "sk-ant-alice-forged-0000000000001"

	BeforeEach(func() {
		acme = newOrg("forged")
		alice = newPerson(acme, "alice")
		aliceKey = store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": aliceValue, "provider": "anthropic"})
	})

	It("vector 4: writes no run Secret, and no last_used_at, for a review of a Pod or a Job that is never stored", func() {
		asks := map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}
		var names []string
		for _, obj := range []runtime.Object{pod("forged-pod", asks), job("forged-job", asks)} {
			resp := forge(acme.Name, alice.User, obj, false)
			Expect(resp.Allowed).To(BeTrue())
			names = append(names, runSecretName.FindString(string(resp.Patch)))
		}
		By("no Secret holding alice's value appears, under the names answered or any other")
		// Longer than a run's wait for its store (delivery.ReissueAfter).
		Consistently(func(g Gomega) {
			for _, n := range names {
				if n == "" {
					continue
				}
				err := k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: n}, &corev1.Secret{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Secret %s: %v", n, err)
			}
			var all corev1.SecretList
			g.Expect(k8sClient.List(ctx, &all, client.InNamespace(acme.Name))).To(Succeed())
			for _, s := range all.Items {
				for _, v := range s.Data {
					g.Expect(string(v)).NotTo(ContainSubstring(aliceValue), "Secret %s", s.Name)
				}
			}
		}, delivery.ReissueAfter+2*time.Second, 250*time.Millisecond).Should(Succeed())
		Expect(listed(alice)[aliceKey.ID].LastUsedAt).To(BeNil())

		By("alice's own Pod, created for real, still gets her key")
		created, err := alice.CS.CoreV1().Pods(acme.Name).Create(ctx, pod("real-pod", asks), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		s := runSecret(acme.Name, created.Labels[hubv1alpha1.LabelRunSecret])
		Expect(s.Data).To(Equal(map[string][]byte{"ANTHROPIC_API_KEY": []byte(aliceValue)}))
		Expect(ownerUID(s)).To(Equal(string(created.UID)), "owned by the Pod from its first write")
		Eventually(func() *string { return listed(alice)[aliceKey.ID].LastUsedAt }).ShouldNot(BeNil())
	})

	It("vector 4: answers a dry run the same whoever is named the requester and whatever they hold", func() {
		jobID := uuid.NewString()
		store(alice, map[string]any{"env_var": "GITHUB_TOKEN", "value": "ghp-alice-forged-job-000000002", "scope": "job", "job_id": jobID})
		asks := map[string]string{
			hubv1alpha1.AnnotationSecrets:             "ANTHROPIC_API_KEY,GITHUB_TOKEN,OPENAI_API_KEY,PATH",
			hubv1alpha1.AnnotationJobID:               jobID,
			hubv1alpha1.AnnotationRegistryCredentials: "GHCR bot",
		}
		const nobody = "system:serviceaccount:elsewhere:nobody"
		for _, obj := range []runtime.Object{pod("dry-pod", asks), job("dry-job", asks)} {
			holder := forge(acme.Name, alice.User, obj, true)
			other := forge(acme.Name, nobody, obj, true)
			Expect(holder.Allowed).To(BeTrue())
			Expect(string(holder.Patch)).NotTo(ContainSubstring(hubv1alpha1.AnnotationDelivered))
			Expect(runSecretName.FindString(string(holder.Patch))).To(BeEmpty())
			Expect(strings.ReplaceAll(string(holder.Patch), alice.User, nobody)).To(Equal(string(other.Patch)))
			Expect(holder.Warnings).To(Equal(other.Warnings))
			Expect(strings.Join(holder.Warnings, "\n")).NotTo(ContainSubstring(alice.User))
			Expect(strings.Join(holder.Warnings, "\n")).To(ContainSubstring("PATH is reserved"))
		}
		Expect(runSecretCount(acme.Name)).To(Equal(0))
		Expect(listed(alice)[aliceKey.ID].LastUsedAt).To(BeNil())
	})
})

// secretWriter lets p create, read, change and delete every Secret of o (beyond the
// sample roles: some platforms grant it).
func secretWriter(o org, p person) {
	Expect(k8sClient.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: "secret-writer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "create", "update", "delete"}}},
	})).To(Succeed())
	sa := strings.TrimPrefix(p.User, "system:serviceaccount:"+o.Name+":")
	Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: "secret-writer-" + sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "secret-writer"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: o.Name}},
	})).To(Succeed())
	Eventually(func(g Gomega) {
		r, err := p.CS.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: o.Name, Verb: "create", Resource: "secrets",
			}},
		}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r.Status.Allowed).To(BeTrue())
	}).Should(Succeed())
}

var _ = Describe("Planted run Secrets", func() {
	It("vector 9: never lets a member's Secret stand as a run Secret, planted before the operator's write or after a delete", func() {
		acme := newOrg("planted")
		alice, carol := newPerson(acme, "alice"), newPerson(acme, "carol")
		const aliceValue, carolValue = "sk-ant-alice-planted-00000000001", "sk-ant-carol-planted-00000000002"
		store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": aliceValue, "provider": "anthropic"})
		secretWriter(acme, carol)
		// The Secret carol writes looks like the operator's in every field she can set.
		plant := func(name, kind string, owner metav1.OwnerReference) error {
			_, err := carol.CS.CoreV1().Secrets(acme.Name).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: acme.Name,
					Labels:          map[string]string{hubv1alpha1.LabelManagedBy: hubv1alpha1.ManagedByPodium, hubv1alpha1.LabelRunFor: kind},
					Annotations:     map[string]string{hubv1alpha1.AnnotationRequester: alice.User},
					OwnerReferences: []metav1.OwnerReference{owner}},
				Data: map[string][]byte{"ANTHROPIC_API_KEY": []byte(carolValue)},
			}, metav1.CreateOptions{})
			return err
		}
		By("the name reservation is enforced (the apiserver loads a new policy a moment after it is created)")
		Eventually(func() error {
			_, err := carol.CS.CoreV1().Secrets(acme.Name).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "podium-run-probe", Namespace: acme.Name}},
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}).Should(MatchError(ContainSubstring("podium-run-secret-writer")))

		asks := map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}
		type run struct {
			name string
			uid  types.UID
		}
		var runs []run
		for i := range 8 {
			var name string
			var err error
			var owner metav1.OwnerReference
			if i%4 == 3 {
				var p *corev1.Pod
				pp := pod("", asks)
				pp.GenerateName = "planted-"
				p, err = alice.CS.CoreV1().Pods(acme.Name).Create(ctx, pp, metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())
				name, owner = p.Labels[hubv1alpha1.LabelRunSecret], delivery.RunOwnerRef(delivery.KindPod, p)
				err = plant(name, delivery.KindPod, owner)
			} else {
				var j = job("", asks)
				j.GenerateName = "planted-"
				created, cerr := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, j, metav1.CreateOptions{})
				Expect(cerr).NotTo(HaveOccurred())
				name, owner = created.Labels[hubv1alpha1.LabelRunSecret], delivery.RunOwnerRef(delivery.KindJob, created)
				err = plant(name, delivery.KindJob, owner)
			}
			// Racing the operator's write: refused whether it comes first or second.
			Expect(err).To(HaveOccurred(), "carol planted %s", name)
			Expect(apierrors.IsAlreadyExists(err) || strings.Contains(err.Error(), "podium-run-secret-writer")).To(BeTrue(), "%v", err)
			runs = append(runs, run{name, owner.UID})
		}
		By("every run Secret is the operator's: alice's value, owned by its run")
		for _, r := range runs {
			Eventually(func(g Gomega) {
				s := &corev1.Secret{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: r.name}, s)).To(Succeed())
				g.Expect(s.Data).To(Equal(map[string][]byte{"ANTHROPIC_API_KEY": []byte(aliceValue)}))
				g.Expect(ownerUID(s)).To(Equal(string(r.uid)))
			}).Should(Succeed())
		}

		By("a member cannot change a run Secret's data; a change of other metadata (the garbage collector's) passes")
		Eventually(func(g Gomega) {
			s, err := carol.CS.CoreV1().Secrets(acme.Name).Get(ctx, runs[1].name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			s.Data["ANTHROPIC_API_KEY"] = []byte(carolValue)
			_, err = carol.CS.CoreV1().Secrets(acme.Name).Update(ctx, s, metav1.UpdateOptions{})
			g.Expect(err).To(MatchError(ContainSubstring("podium-run-secret-writer")))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			s, err := carol.CS.CoreV1().Secrets(acme.Name).Get(ctx, runs[1].name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			s.Labels["note"] = "seen"
			_, err = carol.CS.CoreV1().Secrets(acme.Name).Update(ctx, s, metav1.UpdateOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		}).Should(Succeed())

		By("a member who deletes a Job's run Secret cannot put hers in its place; the operator writes alice's again")
		first := runs[0]
		Expect(carol.CS.CoreV1().Secrets(acme.Name).Delete(ctx, first.name, metav1.DeleteOptions{})).To(Succeed())
		err := plant(first.name, delivery.KindJob, metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "x", UID: first.uid, Controller: ptr.To(true)})
		Expect(err).To(MatchError(ContainSubstring("podium-run-secret-writer")))
		Eventually(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: first.name}, s)).To(Succeed())
			g.Expect(s.Data).To(Equal(map[string][]byte{"ANTHROPIC_API_KEY": []byte(aliceValue)}))
		}, delivery.ReissueAfter+30*time.Second).Should(Succeed())
	})
})
