package metrics_test

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/metrics"
	"podium.dev/podium/internal/operator"
	"podium.dev/podium/internal/testenv"
)

func newNamespace(prefix string) string {
	ns := testenv.Namespace(prefix)
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// pod is a Pod asking for hosted secrets.
func pod(names string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "run-", Annotations: map[string]string{hubv1alpha1.AnnotationSecrets: names}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

// fromSample reads one object of a config/samples file into obj, moved to namespace ns.
func fromSample(file string, obj client.Object, ns string) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", file))
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.Unmarshal(data, obj)).To(Succeed())
	obj.SetNamespace(ns)
}

var _ = Describe("Hosted secrets by state and readiness", func() {
	It("follows a declarative secret from not granted to active, per namespace", func() {
		ns := newNamespace("hs")
		notGranted := map[string]string{"namespace": ns, "state": "pending", "ready": "False", "reason": hubv1alpha1.ReasonSecretNotGranted}
		active := map[string]string{"namespace": ns, "state": "active", "ready": "True", "reason": hubv1alpha1.ReasonActive}

		hs := &hubv1alpha1.HostedSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gh"}, Spec: hubv1alpha1.HostedSecretSpec{
			Scope: hubv1alpha1.ScopeUser, Owner: "system:serviceaccount:" + ns + ":alice", EnvVar: "GITHUB_TOKEN",
			SecretRef: hubv1alpha1.SecretValueRef{Name: "gh", Key: "value"},
		}}
		Expect(k8sClient.Create(ctx, hs)).To(Succeed())
		Eventually(metricValue(metrics.HostedSecretsName, notGranted)).Should(Equal(1.0))
		Expect(metricValue(metrics.HostedSecretsName, active)(Default)).To(BeZero())

		// The Secret, granted to it: the secret becomes active and the gauge moves.
		Expect(k8sClient.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gh", Labels: map[string]string{hubv1alpha1.LabelHostedSecret: "gh"}},
			Data:       map[string][]byte{"value": []byte("ghp_metrics_test_value_000000000001")},
		})).To(Succeed())
		// The controller looks at a Secret it has not adopted again every 30 s.
		Eventually(metricValue(metrics.HostedSecretsName, active)).WithTimeout(2 * time.Minute).Should(Equal(1.0))
		Eventually(metricValue(metrics.HostedSecretsName, notGranted)).Should(BeZero())
	})
})

var _ = Describe("Delivery", func() {
	It("counts what admitted runs got and did not get, by reason, and not dry runs", func() {
		ns := newNamespace("deliver")
		alice := newPerson(ns, "alice")
		value := "sk-ant-metrics-secret-value-00000001"
		store(alice, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": value})

		before := func(name string, l map[string]string) float64 { return metricValue(name, l)(Default) }
		env := map[string]string{"kind": metrics.KindEnv}
		missing := map[string]string{"reason": string(metrics.NotDeliveredNoActiveSecret)}
		reserved := map[string]string{"reason": string(metrics.NotDeliveredReserved)}
		allowed := map[string]string{"operation": "CREATE", "result": metrics.ResultAllowed}
		envBefore, missingBefore := before(metrics.SecretsDeliveredName, env), before(metrics.SecretsNotDeliveredName, missing)
		reservedBefore, allowedBefore := before(metrics.SecretsNotDeliveredName, reserved), before(metrics.AdmissionDurationName, allowed)

		// A dry run is admitted (and timed) but delivers nothing: not counted.
		Eventually(func() error {
			_, err := alice.CS.CoreV1().Pods(ns).Create(ctx, pod("ANTHROPIC_API_KEY"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}).Should(Succeed()) // the RoleBinding reaches the authorizer a moment after it is made
		Expect(before(metrics.SecretsDeliveredName, env)).To(Equal(envBefore))
		Expect(before(metrics.AdmissionDurationName, allowed)).To(BeNumerically(">", allowedBefore))

		_, err := alice.CS.CoreV1().Pods(ns).Create(ctx, pod("ANTHROPIC_API_KEY,OPENAI_API_KEY,HTTPS_PROXY"), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		// Counted once the Pod is stored, a moment after its admission answered.
		Eventually(metricValue(metrics.SecretsDeliveredName, env)).Should(Equal(envBefore + 1))
		Eventually(metricValue(metrics.SecretsNotDeliveredName, missing)).Should(Equal(missingBefore + 1))
		Eventually(metricValue(metrics.SecretsNotDeliveredName, reserved)).Should(Equal(reservedBefore + 1))
		Expect(before(metrics.AdmissionDurationName, allowed)).To(BeNumerically(">=", allowedBefore+2))

		// The run Secret it made is live until its Pod goes.
		Eventually(metricValue(metrics.RunSecretsName, map[string]string{"namespace": ns, "kind": "Pod"})).Should(Equal(1.0))

		// Nothing of the secret reaches /metrics: not its value, its name or its owner.
		_, text := scrape(Default)
		Expect(text).NotTo(ContainSubstring(value))
		Expect(text).NotTo(ContainSubstring(alice.User))
	})
})

var _ = Describe("Leaderboards and rows", func() {
	It("counts rows by validity and boards by readiness, per namespace", func() {
		ns := newNamespace("rows")
		for i, name := range []string{"row-a", "row-b"} {
			Expect(k8sClient.Create(ctx, &hubv1alpha1.LeaderboardRow{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: hubv1alpha1.LeaderboardRowSpec{
					Leaderboard: "terminal-bench-main",
					Metadata:    &apiextensionsv1.JSON{Raw: []byte(`{"agent":"a","model":"m/x"}`)},
					Metrics:     &apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf(`{"reward":0.%d}`, 5+i))},
				},
			})).To(Succeed())
		}
		noBoard := map[string]string{"namespace": ns, "valid": "False", "reason": hubv1alpha1.ReasonLeaderboardNotFound}
		valid := map[string]string{"namespace": ns, "valid": "True", "reason": hubv1alpha1.ReasonValuesValid}
		Eventually(metricValue(metrics.LeaderboardRowsName, noBoard)).Should(Equal(2.0))

		ds := &hubv1alpha1.Dataset{}
		fromSample("hub_v1alpha1_dataset.yaml", ds, ns)
		Expect(k8sClient.Create(ctx, ds)).To(Succeed())
		lb := &hubv1alpha1.Leaderboard{}
		fromSample("hub_v1alpha1_leaderboard_public.yaml", lb, ns)
		lb.Spec.Package = ns + "/terminal-bench"
		Expect(k8sClient.Create(ctx, lb)).To(Succeed())

		Eventually(metricValue(metrics.LeaderboardsName, map[string]string{"namespace": ns, "ready": "True"})).Should(Equal(1.0))
		Eventually(metricValue(metrics.LeaderboardRowsName, valid)).Should(Equal(2.0))
		Eventually(metricValue(metrics.LeaderboardRowsName, noBoard)).Should(BeZero())
	})
})

var _ = Describe("The webhook certificate", func() {
	It("exports the expiry of the certificate the webhook serves", func() {
		s := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: testenv.DeliveryNamespace, Name: operator.DefaultCertSecretName}, s)).To(Succeed())
		block, _ := pem.Decode(s.Data["tls.crt"])
		Expect(block).NotTo(BeNil())
		cert, err := x509.ParseCertificate(block.Bytes)
		Expect(err).NotTo(HaveOccurred())
		fams, _ := scrape(Default)
		v, found := value(fams, metrics.CertificateExpiryName, nil)
		Expect(found).To(BeTrue())
		Expect(v).To(Equal(float64(cert.NotAfter.Unix())))
	})
})
