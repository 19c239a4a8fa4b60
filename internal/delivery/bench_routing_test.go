package delivery_test

import (
	"fmt"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"podium.dev/podium/internal/testenv"
)

// preIsolationRouting is the delivery webhook's routing condition as it was shipped
// before run isolation: the object's own metadata and its pod template's, for Jobs and
// Pods. Run isolation made the webhook route the other template kinds too and every pod
// spec naming a run Secret (fail closed: docs/design/threat-model.md, "The operator down or frozen").
const preIsolationRouting = `[object, oldObject].exists(o, o != null && (
(has(o.metadata.annotations) && o.metadata.annotations.exists(k, k in ['hub.podium.dev/secrets', 'hub.podium.dev/registry-credentials', 'hub.podium.dev/requester', 'hub.podium.dev/delivered', 'hub.podium.dev/delivered-registry-credentials'])) ||
(has(o.metadata.labels) && 'hub.podium.dev/run-secret' in o.metadata.labels) ||
(has(o.spec.template) && has(o.spec.template.metadata) && (
(has(o.spec.template.metadata.annotations) && o.spec.template.metadata.annotations.exists(k, k in ['hub.podium.dev/requester', 'hub.podium.dev/delivered', 'hub.podium.dev/delivered-registry-credentials'])) ||
(has(o.spec.template.metadata.labels) && 'hub.podium.dev/run-secret' in o.spec.template.metadata.labels)))))`

// BenchmarkRoutingCondition measures what the delivery webhook's routing step (its match
// conditions, evaluated by the apiserver for every Pod, Job and template create) costs an
// unannotated Pod and Job, shipped and as it was before run isolation, in the same run.
// Both conditions sit, beside a first condition that only reads the object (it pays
// whatever converting the object for CEL costs the first condition of a request), on
// webhooks the apiserver never calls (every condition is false for these objects), so
// each one's mean evaluation per create (apiserver_admission_match_condition_evaluation_seconds)
// is the condition alone. Reported in ms per create: shipped-ms, pre-isolation-ms.
func BenchmarkRoutingCondition(b *testing.B) {
	benchSetup(b)
	shipped, err := testenv.ShippedWebhook()
	if err != nil {
		b.Fatal(err)
	}
	none := admissionregistrationv1.SideEffectClassNone
	ignore := admissionregistrationv1.Ignore
	hook := func(name string, conditions []admissionregistrationv1.MatchCondition) admissionregistrationv1.MutatingWebhook {
		return admissionregistrationv1.MutatingWebhook{
			Name:                    name + ".routing.bench.podium.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/never-called")},
			Rules:                   shipped.Webhooks[0].Rules,
			MatchConditions:         conditions,
			SideEffects:             &none,
			FailurePolicy:           &ignore,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](1),
		}
	}
	cfgObj := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "podium-routing-bench"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			hook("first", []admissionregistrationv1.MatchCondition{{Name: "reads-the-object", Expression: "object.metadata.name == 'no-such-name'"}}),
			hook("shipped", shipped.Webhooks[0].MatchConditions),
			hook("pre-isolation", []admissionregistrationv1.MatchCondition{shipped.Webhooks[0].MatchConditions[0], {Name: "about-delivery", Expression: preIsolationRouting}}),
		},
	}
	if err := k8sClient.Create(ctx, cfgObj); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := k8sClient.Delete(ctx, cfgObj); err != nil {
			b.Error(err)
		}
	}()
	o := newOrg("routing")
	p := newPerson(o, "router")
	const metric = "match-shipped.routing.bench.podium.dev-ms"
	for deadline := time.Now().Add(time.Minute); ; { // until the apiserver evaluates them
		before := scrapeTotals(b, clientset, "pods")
		if _, err := p.CS.CoreV1().Pods(o.Name).Create(ctx, pod("routing-probe", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			b.Fatal(err)
		}
		if scrapeTotals(b, clientset, "pods")[metric] > before[metric] {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the routing conditions were not evaluated a minute after they were registered")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, kind := range []string{"pod", "job"} {
		b.Run(kind, func(b *testing.B) {
			before := scrapeTotals(b, clientset, "pods")
			for i := range b.N {
				name := fmt.Sprintf("routing-%s-%d-%d", kind, b.N, i)
				var err error
				if kind == "pod" {
					_, err = p.CS.CoreV1().Pods(o.Name).Create(ctx, pod(name, nil), metav1.CreateOptions{})
				} else {
					_, err = p.CS.BatchV1().Jobs(o.Name).Create(ctx, job(name, nil), metav1.CreateOptions{})
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			after := scrapeTotals(b, clientset, "pods")
			for _, name := range []string{"shipped", "pre-isolation"} {
				k := "match-" + name + ".routing.bench.podium.dev-ms"
				b.ReportMetric((after[k]-before[k])*1000/float64(b.N), name+"-ms")
			}
		})
	}
}
