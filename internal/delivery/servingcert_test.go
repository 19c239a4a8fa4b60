package delivery_test

import (
	"bytes"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"podium.dev/podium/internal/servingcert"
	"podium.dev/podium/internal/testenv"
)

var _ = Describe("The operator's own serving certificate", func() {
	It("is shared by replicas, renewed by one of them, and keeps the caBundle written", func() {
		// A webhook configuration of its own that never matches, so nothing is admitted
		// through it.
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "podium-rotation-test"},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{
				Name:                    "never.rotation.hub.podium.dev",
				AdmissionReviewVersions: []string{"v1"},
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://localhost:1/never")},
				MatchConditions:         []admissionregistrationv1.MatchCondition{{Name: "never", Expression: "false"}},
			}},
		}
		Expect(k8sClient.Create(ctx, cfg)).To(Succeed())
		DeferCleanup(func() { Expect(k8sClient.Delete(ctx, cfg)).To(Succeed()) })
		key := types.NamespacedName{Namespace: testenv.DeliveryNamespace, Name: "rotation-test-cert"}
		var mu sync.Mutex
		clock := time.Now()
		now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
		replica := func() *servingcert.Rotator {
			return &servingcert.Rotator{
				Client: k8sClient, Reader: k8sClient, Secret: key, DNSNames: []string{"localhost"},
				WebhookConfiguration: cfg.Name, Log: logf.Log, Now: now,
			}
		}

		By("starting three replicas at once on no Secret: one certificate wins, all serve it")
		replicas := []*servingcert.Rotator{replica(), replica(), replica()}
		var wg sync.WaitGroup
		errs := make([]error, len(replicas))
		for i, r := range replicas {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = r.Sync(ctx) }()
		}
		wg.Wait()
		for _, err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
		stored := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, key, stored)).To(Succeed())
		for _, r := range replicas {
			c, err := r.GetCertificate(nil)
			Expect(err).NotTo(HaveOccurred())
			pair, err := servingcert.KeyPair(stored.Data)
			Expect(err).NotTo(HaveOccurred())
			Expect(c.Certificate[0]).To(Equal(pair.Certificate[0]))
			Expect(r.Ready()).To(BeTrue())
		}
		caBundle := func() []byte {
			got := &admissionregistrationv1.MutatingWebhookConfiguration{}
			Expect(k8sClient.Get(ctx, client.ObjectKey{Name: cfg.Name}, got)).To(Succeed())
			return got.Webhooks[0].ClientConfig.CABundle
		}
		Expect(caBundle()).To(Equal(stored.Data[servingcert.KeyCABundle]))

		By("renewing when a third of its life is left, from the same CA")
		mu.Lock()
		clock = servingcert.RenewAt(stored.Data).Add(time.Minute)
		mu.Unlock()
		Expect(replicas[2].Sync(ctx)).To(Succeed())
		renewed := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, key, renewed)).To(Succeed())
		Expect(renewed.Data[servingcert.KeyCert]).NotTo(Equal(stored.Data[servingcert.KeyCert]))
		Expect(renewed.Data[servingcert.KeyCABundle]).To(Equal(stored.Data[servingcert.KeyCABundle]))

		By("a replica that has not looked yet picks the renewed one up on its next check")
		Expect(replicas[0].Sync(ctx)).To(Succeed())
		c, _ := replicas[0].GetCertificate(nil)
		pair, _ := servingcert.KeyPair(renewed.Data)
		Expect(bytes.Equal(c.Certificate[0], pair.Certificate[0])).To(BeTrue())

		By("writing the caBundle again after someone reset it")
		got := &admissionregistrationv1.MutatingWebhookConfiguration{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: cfg.Name}, got)).To(Succeed())
		got.Webhooks[0].ClientConfig.CABundle = nil
		Expect(k8sClient.Update(ctx, got)).To(Succeed())
		Expect(replicas[1].Sync(ctx)).To(Succeed())
		Expect(caBundle()).To(Equal(renewed.Data[servingcert.KeyCABundle]))
	})
})
