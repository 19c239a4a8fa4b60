package delivery_test

import (
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
)

var _ = Describe("The shipped webhook configuration", func() {
	It("blocks only runs that ask for secrets when the operator does not answer", func() {
		down, err := testenv.ShippedWebhook()
		Expect(err).NotTo(HaveOccurred())
		Expect(down.Webhooks).To(HaveLen(2))
		Expect(down.Webhooks[0].Name).To(Equal("runs.delivery.hub.podium.dev"))
		Expect(down.Webhooks[0].FailurePolicy).To(Equal(ptr.To(admissionregistrationv1.Fail)))
		Expect(down.Webhooks[1].Name).To(Equal("rows.identity.hub.podium.dev"))
		Expect(down.Webhooks[1].FailurePolicy).To(Equal(ptr.To(admissionregistrationv1.Ignore)), "a row's create never waits on the operator")
		// The same configuration, pointing at a port nothing listens on (port 1). Both
		// configurations carry the same webhook names; only this one can fail.
		down.Name = "podium-delivery-down"
		for i := range down.Webhooks {
			down.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://localhost:1" + *down.Webhooks[i].ClientConfig.Service.Path)}
		}
		Expect(k8sClient.Create(ctx, down)).To(Succeed())
		DeferCleanup(func() { Expect(k8sClient.Delete(ctx, down)).To(Succeed()) })

		o := newOrg("down")
		p := newPerson(o, "dora")
		Eventually(func() string {
			_, err := p.CS.CoreV1().Pods(o.Name).Create(ctx, pod("", map[string]string{hubv1alpha1.AnnotationSecrets: "ANTHROPIC_API_KEY"}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err == nil {
				return ""
			}
			return err.Error()
		}).Should(ContainSubstring(`failed calling webhook "runs.delivery.hub.podium.dev"`), "a run asking for secrets is refused, naming the webhook")
		naming := pod("naming", nil)
		naming.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "podium-run-bcdfghjklmnp"}}
		_, err = p.CS.CoreV1().Pods(o.Name).Create(ctx, naming, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		Expect(err).To(MatchError(ContainSubstring(`failed calling webhook "runs.delivery.hub.podium.dev"`)), "so is a Pod that names a run Secret")
		tmpl := job("templated", nil)
		tmpl.Spec.Template.Annotations = map[string]string{hubv1alpha1.AnnotationRequester: "forged"}
		_, err = p.CS.BatchV1().Jobs(o.Name).Create(ctx, tmpl, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		Expect(err).To(MatchError(ContainSubstring(`failed calling webhook "runs.delivery.hub.podium.dev"`)), "and a template carrying what admission records")
		_, err = p.CS.CoreV1().Pods(o.Name).Create(ctx, pod("plain", nil), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred(), "a Pod that asks for nothing is never sent to the webhook")
		j := job("plain", nil)
		_, err = p.CS.BatchV1().Jobs(o.Name).Create(ctx, j, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred(), "neither is such a Job")
		row := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Namespace: o.Name, Name: "row"},
			Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "board"}}
		Expect(k8sClient.Create(ctx, row, client.DryRunAll)).To(Succeed(), "a row is created while the row webhook does not answer")
	})

	It("renders in config/default and, with cert-manager, in config/certmanager", func() {
		kubectl, err := testenv.Kubectl()
		Expect(err).NotTo(HaveOccurred())
		render := func(dir string) string {
			out, err := exec.Command(kubectl, "kustomize", filepath.Join(testenv.RepoRoot(), "config", dir)).CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
			return string(out)
		}
		def := render("default")
		for _, want := range []string{"kind: MutatingWebhookConfiguration", "name: podium-webhook", "--webhook-addr=:9443", "containerPort: 9443", "POD_NAMESPACE"} {
			Expect(def).To(ContainSubstring(want))
		}
		Expect(def).NotTo(ContainSubstring("--webhook-cert-dir"))
		cm := render("certmanager")
		for _, want := range []string{"kind: Certificate", "cert-manager.io/inject-ca-from: podium-system/podium-webhook", "--webhook-cert-dir=/var/run/podium/webhook-certs", "secretName: podium-webhook-tls"} {
			Expect(cm).To(ContainSubstring(want))
		}
		Expect(strings.Count(cm, "kind: MutatingWebhookConfiguration")).To(Equal(1))
	})
})
