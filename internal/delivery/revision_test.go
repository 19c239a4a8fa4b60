package delivery_test

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// ControllerRevisions (docs/design/delivery.md, "Trusted controllers"): kube-controller-manager's
// StatefulSet controller makes Pods from the data of its ControllerRevisions, with the
// trust the admission policies give a workload controller (they checked the template it
// copied). A member who may write ControllerRevisions (full rights on them: a grant some
// platforms give) forges one holding a template that names alice's run Secret and
// records alice as its requester, puts it where the controller reads the template of a
// Pod it is about to recreate, and gets that Pod made. Only the StatefulSet and
// DaemonSet controllers (and holders of write-revisions) may create one.
var _ = Describe("ControllerRevisions are the workload controllers' own", Ordered, ContinueOnFailure, func() {
	var acme org
	var alice, mallory person
	var aliceRun string
	const aliceValue = "sk-ant-alice-revision-00000000000001"

	BeforeAll(func() {
		acme = newOrg("revision")
		alice, mallory = newPerson(acme, "alice"), newPerson(acme, "mallory")
		store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": aliceValue, "provider": "anthropic"})
		j := job("alice-job", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"})
		created, err := alice.CS.BatchV1().Jobs(acme.Name).Create(ctx, j, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		aliceRun = created.Labels[hubv1alpha1.LabelRunSecret]
		Expect(aliceRun).To(HavePrefix("podium-run-"))

		By("the platform grants mallory every verb on controllerrevisions")
		Expect(k8sClient.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "revisions"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions"}, Verbs: []string{"*"}}}})).To(Succeed())
		Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "mallory-revisions"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "revisions"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "mallory", Namespace: acme.Name}}})).To(Succeed())
		Eventually(func() error {
			_, err := mallory.CS.AppsV1().ControllerRevisions(acme.Name).List(ctx, metav1.ListOptions{})
			return err
		}).Should(Succeed())
	})

	// forgedData is a StatefulSet ControllerRevision's data (a strategic merge patch
	// replacing the template) whose template records alice as requester, asks for her key
	// and names her run Secret.
	forgedData := func(labels map[string]string) runtime.RawExtension {
		tmpl := map[string]any{
			"$patch": "replace",
			"metadata": map[string]any{"labels": labels, "annotations": map[string]string{
				hubv1alpha1.AnnotationRequester: alice.User, hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}},
			"spec": map[string]any{"containers": []corev1.Container{{Name: "agent", Image: "busybox",
				Env: []corev1.EnvVar{envRefTo(aliceRun, "ANTHROPIC_API_KEY")}}}},
		}
		raw, err := json.Marshal(map[string]any{"spec": map[string]any{"template": tmpl}})
		Expect(err).NotTo(HaveOccurred())
		return runtime.RawExtension{Raw: raw}
	}

	It("refuses a forged revision of mallory's StatefulSet: the Pod its controller recreates is made from her template, not alice's", func() {
		ns := acme.Name
		labels := map[string]string{"app": "mallory-sts"}
		By("mallory's StatefulSet, whose ordinal 0 stays at the current revision (partition 1)")
		sts, err := mallory.CS.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "ms"},
			Spec: appsv1.StatefulSetSpec{
				Replicas: ptr.To[int32](1), ServiceName: "ms",
				Selector:       &metav1.LabelSelector{MatchLabels: labels},
				UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)}},
				Template:       alwaysRestart(corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec()}),
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		pod0 := &corev1.Pod{}
		Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ms-0"}, pod0) }).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
			g.Expect(sts.Status.CurrentRevision).NotTo(BeEmpty())
		}).Should(Succeed())
		current := sts.Status.CurrentRevision

		By("a change of her template: a new update revision, written by the StatefulSet controller; ordinal 0 stays at the current one")
		Eventually(func() error {
			s, err := mallory.CS.AppsV1().StatefulSets(ns).Get(ctx, "ms", metav1.GetOptions{})
			if err != nil {
				return err
			}
			s.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "ROUND", Value: "2"}}
			_, err = mallory.CS.AppsV1().StatefulSets(ns).Update(ctx, s, metav1.UpdateOptions{})
			return err
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
			g.Expect(sts.Status.UpdateRevision).NotTo(BeEmpty())
			g.Expect(sts.Status.UpdateRevision).NotTo(Equal(current))
			g.Expect(sts.Status.CurrentRevision).To(Equal(current))
		}).Should(Succeed())

		By("mallory replaces the current revision with a forged one of the same name")
		real, err := mallory.CS.AppsV1().ControllerRevisions(ns).Get(ctx, current, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(mallory.CS.AppsV1().ControllerRevisions(ns).Delete(ctx, current, metav1.DeleteOptions{})).To(Succeed())
		forged := &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{Name: current, Labels: real.Labels, OwnerReferences: real.OwnerReferences},
			Revision:   real.Revision, Data: forgedData(labels),
		}
		_, forgeErr := mallory.CS.AppsV1().ControllerRevisions(ns).Create(ctx, forged, metav1.CreateOptions{})

		By("and deletes ordinal 0, which the controller recreates from the current revision")
		Expect(mallory.CS.CoreV1().Pods(ns).Delete(ctx, "ms-0", metav1.DeleteOptions{})).To(Succeed())
		again := &corev1.Pod{}
		Eventually(func(g Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ms-0"}, again)).To(Succeed())
			g.Expect(again.UID).NotTo(Equal(pod0.UID))
		}).Should(Succeed())
		Expect(again.Annotations[hubv1alpha1.AnnotationRequester]).NotTo(Equal(alice.User), "the recreated Pod is a run of alice")
		for _, c := range again.Spec.Containers {
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					Expect(e.ValueFrom.SecretKeyRef.Name).NotTo(Equal(aliceRun), "the recreated Pod names alice's run Secret")
				}
			}
		}
		refusedBy(forgeErr, "podium-controller-revisions", aliceValue)
		Expect(forgeErr.Error()).To(ContainSubstring("ControllerRevision " + ns + "/" + current))
	})

	It("refuses a new revision a StatefulSet would adopt (no owner, its selector's labels)", func() {
		_, err := mallory.CS.AppsV1().ControllerRevisions(acme.Name).Create(ctx, &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "ms-", Labels: map[string]string{"app": "mallory-sts"}},
			Revision:   99, Data: forgedData(map[string]string{"app": "mallory-sts"}),
		}, metav1.CreateOptions{})
		refusedBy(err, "podium-controller-revisions", aliceValue)
		By("whatever its data holds: the controller would read whatever it holds")
		_, err = mallory.CS.AppsV1().ControllerRevisions(acme.Name).Create(ctx, &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "ms-"}, Revision: 1, Data: runtime.RawExtension{Raw: []byte(`{"Spec":{}}`)},
		}, metav1.CreateOptions{})
		refusedBy(err, "podium-controller-revisions")
	})

	It("lets the DaemonSet controller write the revisions of mallory's DaemonSet", func() {
		labels := map[string]string{"app": "mallory-ds"}
		ds, err := mallory.CS.AppsV1().DaemonSets(acme.Name).Create(ctx, &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "mds"},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: alwaysRestart(corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec()})},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			list, err := clientset.AppsV1().ControllerRevisions(acme.Name).List(ctx, metav1.ListOptions{LabelSelector: "app=mallory-ds"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(list.Items).To(ContainElement(HaveField("OwnerReferences", ContainElement(HaveField("UID", ds.UID)))))
		}).Should(Succeed())
	})

	It("lets a cluster admin (who holds write-revisions, as every verb) write one, e.g. a restore", func() {
		Expect(k8sClient.Create(ctx, &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "restored"}, Revision: 1,
			Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"$patch":"replace"}}}`)},
		}, client.DryRunAll)).To(Succeed())
	})
})
