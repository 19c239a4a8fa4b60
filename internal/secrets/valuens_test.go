package secrets_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/secrets"
)

// Where values live (docs/design/secrets.md, "Where values live"): values stored over HTTP are
// in the operator's value namespace, never in the org namespace, where anyone who may
// create a Pod could mount them.

// asPerson returns a client and a clientset acting with p's token.
func asPerson(p person) (client.Client, *kubernetes.Clientset) {
	pc := rest.AnonymousClientConfig(cfg)
	pc.BearerToken = p.Token
	c, err := client.New(pc, client.Options{Scheme: scheme.Scheme})
	Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(pc)
	Expect(err).NotTo(HaveOccurred())
	return c, cs
}

// allowPods lets the people create Pods in the org (as a platform team does for those
// who launch runs).
func allowPods(o org, people ...person) {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: "runs"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get"}}},
	}
	Expect(k8sClient.Create(ctx, role)).To(Succeed())
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: "runs"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "runs"},
	}
	for _, p := range people {
		user := strings.Split(p.User, ":")
		rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: user[2], Name: user[3]})
	}
	Expect(k8sClient.Create(ctx, rb)).To(Succeed())
	// The RBAC authorizer sees a new binding a moment later.
	_, cs := asPerson(people[0])
	Eventually(func() error {
		_, err := cs.CoreV1().Pods(o.Name).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}).Should(Succeed())
}

// deliver has p create a Pod asking for names and returns the data of its run Secret
// (nil when nothing was delivered: then there is none).
func deliver(o org, p person, names ...string) map[string][]byte {
	_, cs := asPerson(p)
	pod, err := cs.CoreV1().Pods(o.Name).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "run-", Annotations: map[string]string{hubv1alpha1.AnnotationSecrets: strings.Join(names, ",")}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	if pod.Labels[hubv1alpha1.LabelRunSecret] == "" {
		return nil
	}
	// The run Secret is written once the Pod is stored, a moment after its admission.
	run := &corev1.Secret{}
	EventuallyWithOffset(1, func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: o.Name, Name: pod.Labels[hubv1alpha1.LabelRunSecret]}, run)
	}).Should(Succeed())
	return run.Data
}

// updateRef changes hs's secretRef as c, on the HostedSecret as it is now (the
// controller writes its status meanwhile), and returns the answer that was not a conflict.
func updateRef(c client.Client, hs *hubv1alpha1.HostedSecret, change func(*hubv1alpha1.SecretValueRef)) error {
	var err error
	for range 20 {
		cur := &hubv1alpha1.HostedSecret{}
		if err = k8sClient.Get(ctx, client.ObjectKeyFromObject(hs), cur); err != nil {
			return err
		}
		change(&cur.Spec.SecretRef)
		if err = c.Update(ctx, cur); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

// olderStore stores as Podium did before values moved out of the org namespace: the
// same store with no value namespace writes the value Secret next to its HostedSecret,
// owned by it.
func olderStore() *secrets.Store {
	return &secrets.Store{Lifecycle: &secrets.Lifecycle{
		Client: k8sClient, Reader: k8sClient, Slots: &secrets.Slots{Client: k8sClient, Reader: k8sClient}, Log: logr.Discard(),
	}}
}

var _ = Describe("Where values live", func() {
	var (
		acme       org
		alice, bob person
		owner      person
	)
	BeforeEach(func() {
		acme = newOrg("values")
		alice = newPerson(acme, "alice", "podium-org-member")
		bob = newPerson(acme, "bob", "podium-org-member")
		owner = newPerson(acme, "owner", "podium-org-owner")
	})

	It("keeps a value stored over HTTP in the operator's namespace, out of members' reach", func() {
		code, body := store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-alice-value-0001"})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		hs := hostedSecret(acme, decode[record](body).ID)
		Expect(hs.Spec.SecretRef.Namespace).To(Equal(valueNamespace))
		name := hs.Spec.SecretRef.Name

		By("the value is in the value namespace, bound to its HostedSecret, and not in the org's")
		s := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: valueNamespace, Name: name}, s)).To(Succeed())
		Expect(string(s.Data["value"])).To(Equal("sk-ant-alice-value-0001"))
		Expect(s.Labels).To(And(HaveKeyWithValue(hubv1alpha1.LabelOrg, acme.Name), HaveKeyWithValue(hubv1alpha1.LabelHostedSecret, hs.Name)))
		Expect(s.Annotations).To(HaveKeyWithValue(hubv1alpha1.AnnotationHostedSecretUID, string(hs.UID)))
		Expect(s.OwnerReferences).To(BeEmpty(), "no owner reference crosses namespaces")
		Expect(ptr.Deref(s.Immutable, false)).To(BeTrue())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: name}, &corev1.Secret{}))).To(BeTrue())
		var inOrg corev1.SecretList
		Expect(k8sClient.List(ctx, &inOrg, client.InNamespace(acme.Name), client.HasLabels{hubv1alpha1.LabelHostedSecret})).To(Succeed())
		Expect(inOrg.Items).To(BeEmpty())

		By("members' tokens cannot read it, there or anywhere")
		for _, p := range []person{bob, alice, owner} {
			_, cs := asPerson(p)
			_, err := cs.CoreV1().Secrets(valueNamespace).Get(ctx, name, metav1.GetOptions{})
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "get as %s: %v", p.User, err)
			_, err = cs.CoreV1().Secrets(valueNamespace).List(ctx, metav1.ListOptions{})
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "list as %s: %v", p.User, err)
		}

		By("the attack: bob creates a Pod in the org that mounts alice's value Secret by name")
		allowPods(acme, bob, alice)
		_, bobCS := asPerson(bob)
		// Kubernetes admits it without checking bob's Secret rights; the kubelet would
		// look the Secret up in the Pod's namespace, where it no longer is.
		attack, err := bobCS.CoreV1().Pods(acme.Name).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "steal"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox", Env: []corev1.EnvVar{{
				Name: "STOLEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: "value"}},
			}}}}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		ref := attack.Spec.Containers[0].Env[0].ValueFrom.SecretKeyRef
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: attack.Namespace, Name: ref.Name}, &corev1.Secret{}))).
			To(BeTrue(), "the Secret the Pod names does not exist in its namespace")

		By("delivery reads it from the value namespace into the run's Secret in the org")
		Expect(deliver(acme, alice, "ANTHROPIC_API_KEY")).To(HaveKeyWithValue("ANTHROPIC_API_KEY", []byte("sk-ant-alice-value-0001")))
		Expect(deliver(acme, bob, "ANTHROPIC_API_KEY")).To(BeNil(), "never another user's")

		By("supersede, revoke and purge act on the value namespace")
		code, body = store(owner, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-openai-owner-0001"})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		first := decode[record](body)
		Expect(storedValues(acme)).To(HaveLen(2))
		code, body = store(owner, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-openai-owner-0002", "supersede_credential_id": first.ID})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		second := hostedSecret(acme, decode[record](body).ID)
		Expect(storedValues(acme)).To(ConsistOf(
			HaveField("Name", name),
			HaveField("Annotations", HaveKeyWithValue(hubv1alpha1.AnnotationHostedSecretUID, string(second.UID)))),
			"the superseded value is deleted, the new one is there")
		Expect(revoke(owner, map[string]any{"env_var": "OPENAI_API_KEY"})).To(Equal(1))
		Expect(storedValues(acme)).To(ConsistOf(HaveField("Name", name)), "revoke deletes the value")
		Expect(revoke(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "purge": true})).To(Equal(1))
		Expect(storedValues(acme)).To(BeEmpty(), "purge deletes the value")
		Expect(hostedSecrets(acme)).To(HaveLen(2), "the revoked OPENAI_API_KEY records are kept")
	})

	It("lets nobody but the operator place a value outside the org namespace", func() {
		code, body := store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-alice-value-0002"})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		alices := hostedSecret(acme, decode[record](body).ID)

		for _, p := range []person{bob, owner} {
			c, _ := asPerson(p)
			By("a HostedSecret of " + p.User + " naming alice's value Secret in the value namespace")
			steal := &hubv1alpha1.HostedSecret{
				ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: alices.Name},
				Spec: hubv1alpha1.HostedSecretSpec{Scope: hubv1alpha1.ScopeUser, Owner: p.User, EnvVar: "STOLEN",
					SecretRef: hubv1alpha1.SecretValueRef{Namespace: valueNamespace, Name: alices.Spec.SecretRef.Name}},
			}
			err := c.Create(ctx, steal, client.DryRunAll)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring("spec.secretRef.namespace"))
			steal.Spec.SecretRef.Namespace = "kube-system"
			Expect(apierrors.IsForbidden(c.Create(ctx, steal, client.DryRunAll))).To(BeTrue())
			steal.Spec.SecretRef.Namespace = acme.Name
			steal.Name = "own-namespace"
			Expect(c.Create(ctx, steal, client.DryRunAll)).To(Succeed(), "naming its own namespace needs nothing")
		}

		By("the org owner setting the namespace of a declarative secret")
		decl := declared(acme, "decl", owner.User, "DECL_KEY", "decl-value")
		ownerClient, _ := asPerson(owner)
		Expect(ownerClient.Create(ctx, decl)).To(Succeed())
		err := updateRef(ownerClient, decl, func(r *hubv1alpha1.SecretValueRef) { r.Namespace = valueNamespace })
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.secretRef.namespace"))

		By("even the operator's rights cannot change a namespace once set, or rename the Secret")
		err = updateRef(k8sClient, alices, func(r *hubv1alpha1.SecretValueRef) { r.Namespace = acme.Name })
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("secretRef is immutable"))
		err = updateRef(k8sClient, decl, func(r *hubv1alpha1.SecretValueRef) { r.Namespace, r.Name = valueNamespace, "other" })
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	})

	It("quarantines the value when its HostedSecret is deleted, also one left by a stopped operator", func() {
		code, body := store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-alice-value-0003"})
		Expect(code).To(Equal(http.StatusCreated), string(body))
		hs := hostedSecret(acme, decode[record](body).ID)
		Expect(storedValues(acme)).To(HaveLen(1))
		aliceClient, _ := asPerson(alice)
		Expect(aliceClient.Delete(ctx, hs)).To(Succeed(), "kubectl delete of one's own secret")
		// Kept for the grace (docs/operations.md, "Quarantine"): its record may be
		// restored; then deleted.
		Eventually(func(g Gomega) {
			vals := storedValues(acme)
			g.Expect(vals).To(HaveLen(1))
			g.Expect(vals[0].Labels).To(HaveKeyWithValue(hubv1alpha1.LabelQuarantined, "true"))
			g.Expect(vals[0].Annotations).To(HaveKey(hubv1alpha1.AnnotationQuarantinedAt))
		}).Should(Succeed())

		By("a value whose HostedSecret went while no operator ran (found when the operator lists its Secrets)")
		left := secrets.Place{Namespace: valueNamespace}.NewValueSecret(
			&hubv1alpha1.HostedSecret{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "gone-secret", UID: "5b0c9f0e-0000-4000-8000-000000000001"}},
			client.ObjectKey{Namespace: valueNamespace, Name: "gone-secret"}, "", map[string][]byte{"value": []byte("left-behind-value")})
		Expect(k8sClient.Create(ctx, left)).To(Succeed())
		Eventually(func(g Gomega) {
			got := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(left), got)).To(Succeed())
			g.Expect(got.Labels).To(HaveKeyWithValue(hubv1alpha1.LabelQuarantined, "true"))
		}).Should(Succeed())
	})

	It("moves values an older Podium stored in the org namespace, also after a move interrupted at any step", func() {
		allowPods(acme, alice)
		values := map[string]string{"A_KEY": "value-of-a-0001", "B_KEY": "value-of-b-0002", "C_KEY": "value-of-c-0003"}
		stored := map[string]*hubv1alpha1.HostedSecret{}
		place := secrets.Place{Namespace: valueNamespace}
		var (
			mu       sync.Mutex
			failures []string
			reads    int
		)
		var revokedName string
		stopReading := make(chan struct{})
		readerDone := make(chan struct{})
		// readable checks that a reader finds hs's value, with the HostedSecret as it read
		// it (possibly from before the move) and as it is now.
		readable := func(hs *hubv1alpha1.HostedSecret, want string) error {
			for _, view := range []*hubv1alpha1.HostedSecret{hs, nil} {
				if view == nil {
					view = &hubv1alpha1.HostedSecret{}
					if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(hs), view); err != nil {
						return err
					}
				}
				s, err := place.Find(ctx, view, k8sClient)
				if err != nil {
					return err
				}
				if ok, why := secrets.Granted(s, view); !ok {
					return fmt.Errorf("%s (ref %v): %s", view.Spec.EnvVar, view.Spec.SecretRef, why)
				}
				if got := string(s.Data["value"]); got != want {
					return fmt.Errorf("%s: read %d bytes of another value", view.Spec.EnvVar, len(got))
				}
			}
			return nil
		}

		restartOperator(func() {
			By("an older Podium stored three values in the org namespace")
			older := olderStore()
			for env, v := range values {
				hs, _, err := older.Store(ctx, secrets.StoreRequest{
					Slot:  secrets.Slot{Namespace: acme.Name, Scope: hubv1alpha1.ScopeUser, Owner: alice.User, EnvVar: env},
					Value: []byte(v), CreatedBy: alice.User,
				})
				Expect(err).NotTo(HaveOccurred())
				Expect(hs.Spec.SecretRef.Namespace).To(BeEmpty())
				Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: hs.Spec.SecretRef.Name}, &corev1.Secret{})).To(Succeed())
				stored[env] = hs
			}
			By("a declaratively granted Secret beside them")
			Expect(k8sClient.Create(ctx, grantedSecret(acme, "team-key", "team", map[string]string{"value": "team-value-0004"}))).To(Succeed())
			Expect(k8sClient.Create(ctx, declared(acme, "team", alice.User, "TEAM_KEY", "team-key"))).To(Succeed())

			By("a move of B died after its copy, a move of C after pointing at it")
			mover := &secrets.Lifecycle{Client: k8sClient, Reader: k8sClient, Log: logr.Discard(), Place: place,
				Slots: &secrets.Slots{Client: k8sClient, Reader: k8sClient}}
			fresh := func(env string) *hubv1alpha1.HostedSecret {
				hs := &hubv1alpha1.HostedSecret{}
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(stored[env]), hs)).To(Succeed())
				return hs
			}
			step, err := mover.MoveValue(ctx, fresh("B_KEY"), secrets.MoveCopied)
			Expect(err).NotTo(HaveOccurred())
			Expect(step).To(Equal(secrets.MoveCopied))
			Expect(fresh("B_KEY").Spec.SecretRef.Namespace).To(BeEmpty())
			step, err = mover.MoveValue(ctx, fresh("C_KEY"), secrets.MovePointed)
			Expect(err).NotTo(HaveOccurred())
			Expect(step).To(Equal(secrets.MovePointed))
			Expect(fresh("C_KEY").Spec.SecretRef.Namespace).To(Equal(valueNamespace))
			for _, env := range []string{"B_KEY", "C_KEY"} {
				Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: stored[env].Name}, &corev1.Secret{})).To(Succeed(), "the original of %s is still there", env)
				Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: valueNamespace, Name: stored[env].Name}, &corev1.Secret{})).To(Succeed(), "the copy of %s is there", env)
			}
			for env, hs := range stored {
				Expect(readable(hs, values[env])).To(Succeed())
			}

			By("a move of D raced a revoke by a replica of the older release, which died before deleting the value")
			d, _, err := older.Store(ctx, secrets.StoreRequest{
				Slot:  secrets.Slot{Namespace: acme.Name, Scope: hubv1alpha1.ScopeUser, Owner: alice.User, EnvVar: "D_KEY"},
				Value: []byte("value-of-d-0005"), CreatedBy: alice.User,
			})
			Expect(err).NotTo(HaveOccurred())
			freshD := func() *hubv1alpha1.HostedSecret {
				hs := &hubv1alpha1.HostedSecret{}
				Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(d), hs)).To(Succeed())
				return hs
			}
			staleD := &hubv1alpha1.HostedSecret{}
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(d), staleD)).To(Succeed())
			step, err = mover.MoveValue(ctx, staleD.DeepCopy(), secrets.MoveCopied)
			Expect(err).NotTo(HaveOccurred())
			Expect(step).To(Equal(secrets.MoveCopied))
			revokedD := freshD()
			revokedD.Status.State, revokedD.Status.Reason = hubv1alpha1.StateRevoked, hubv1alpha1.RevokedByRequest
			Expect(k8sClient.Status().Update(ctx, revokedD)).To(Succeed())
			// The mover, still holding D as it was before the revoke, must not point the
			// revoked secret anywhere.
			step, err = mover.MoveValue(ctx, staleD.DeepCopy(), secrets.MoveDone)
			Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
			Expect(step).To(Equal(secrets.MoveCopied))
			Expect(freshD().Spec.SecretRef.Namespace).To(BeEmpty())
			step, err = mover.MoveValue(ctx, freshD(), secrets.MoveDone)
			Expect(err).NotTo(HaveOccurred())
			Expect(step).To(Equal(secrets.MoveNone), "a revoked secret is not moved")
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: valueNamespace, Name: d.Name}, &corev1.Secret{})).To(Succeed(), "the copy is left for the operator")
			Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: d.Name}, &corev1.Secret{})).To(Succeed(), "so is the original")
			revokedName = d.Name

			By("readers keep reading every value while the new operator moves them")
			go func() {
				defer close(readerDone)
				for {
					select {
					case <-stopReading:
						return
					default:
					}
					for env, hs := range stored {
						err := readable(hs, values[env])
						mu.Lock()
						reads++
						if err != nil {
							failures = append(failures, err.Error())
						}
						mu.Unlock()
					}
				}
			}()
		})

		By("the new operator finishes every move")
		Eventually(func(g Gomega) {
			for env, old := range stored {
				hs := &hubv1alpha1.HostedSecret{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(old), hs)).To(Succeed())
				g.Expect(hs.Spec.SecretRef).To(Equal(hubv1alpha1.SecretValueRef{Namespace: valueNamespace, Name: old.Name, Key: "value"}), env)
				g.Expect(hs.Status.State).To(Equal(hubv1alpha1.StateActive), env)
				g.Expect(hs.Status.ValueLast4).To(Equal(values[env][len(values[env])-4:]), env)
				g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: old.Name}, &corev1.Secret{}))).
					To(BeTrue(), "the original of %s is deleted", env)
				s := &corev1.Secret{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: valueNamespace, Name: old.Name}, s)).To(Succeed())
				g.Expect(string(s.Data["value"])).To(Equal(values[env]))
			}
		}).WithTimeout(time.Minute).Should(Succeed())
		close(stopReading)
		<-readerDone
		mu.Lock()
		Expect(failures).To(BeEmpty(), "a value was unreadable during the move")
		Expect(reads).To(BeNumerically(">", 0))
		mu.Unlock()

		By("the new operator deletes both sides of the value revoked during its move")
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: revokedName}, &corev1.Secret{}))).To(BeTrue())
			var there corev1.SecretList
			g.Expect(k8sClient.List(ctx, &there, client.InNamespace(valueNamespace), client.MatchingLabels{hubv1alpha1.LabelOrg: acme.Name})).To(Succeed())
			g.Expect(there.Items).To(HaveLen(3), "A, B and C; not D")
		}).Should(Succeed())

		By("the declaratively granted Secret stays where the platform team put it")
		Eventually(func(g Gomega) { g.Expect(readyReason(g, acme, "team")).To(Equal(hubv1alpha1.ReasonActive)) }).Should(Succeed())
		team := &hubv1alpha1.HostedSecret{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "team"}, team)).To(Succeed())
		Expect(team.Spec.SecretRef.Namespace).To(BeEmpty())
		Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: acme.Name, Name: "team-key"}, &corev1.Secret{})).To(Succeed())
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: valueNamespace, Name: "team-key"}, &corev1.Secret{}))).To(BeTrue())

		By("delivery and revoke work on the moved values")
		Expect(deliver(acme, alice, "A_KEY", "B_KEY", "C_KEY", "TEAM_KEY")).To(Equal(map[string][]byte{
			"A_KEY": []byte(values["A_KEY"]), "B_KEY": []byte(values["B_KEY"]), "C_KEY": []byte(values["C_KEY"]), "TEAM_KEY": []byte("team-value-0004"),
		}))
		Expect(revoke(alice, map[string]any{"env_var": "B_KEY"})).To(Equal(1))
		Expect(apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Namespace: valueNamespace, Name: stored["B_KEY"].Name}, &corev1.Secret{}))).To(BeTrue())
		Expect(storedValues(acme)).To(HaveLen(2))
	})
})
