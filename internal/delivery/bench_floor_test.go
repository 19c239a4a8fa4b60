package delivery_test

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// floorLabel marks the Jobs sent to the floor webhook (and to no other).
const floorLabel = "bench.podium.dev/floor-webhook"

// floorPatch is the floor webhook's one change: a label, so that the apiserver applies a
// patch, as it applies delivery's.
var floorPatch = []byte(`[{"op":"add","path":"/metadata/labels/bench.podium.dev~1floor-answered","value":"true"}]`)

// startFloorWebhook serves, on 127.0.0.1 over TLS (HTTP/1.1, as the operator's webhook
// server), the least a mutating webhook can do: decode the AdmissionReview, allow, add
// one label. It registers it for Job creates labelled floorLabel, and returns a stop
// function. What a Job sent to it costs over an unannotated Job is the floor of any
// webhook on this machine: the round trip delivery pays before doing anything
// (docs/performance.md, "Delivery and run Secret isolation").
func startFloorWebhook(b *testing.B) func() {
	b.Helper()
	patchType := admissionv1.PatchTypeJSONPatch
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		review := &admissionv1.AdmissionReview{}
		if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true, PatchType: &patchType, Patch: floorPatch}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}))
	srv.StartTLS()
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	cfgObj := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-floor"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "floor.bench.podium.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/mutate"), CABundle: caBundle},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}}}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{floorLabel: "true"}},
			SideEffects:             &none,
			FailurePolicy:           &fail,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}},
	}
	if err := k8sClient.Create(ctx, cfgObj); err != nil {
		srv.Close()
		b.Fatal(err)
	}
	return func() {
		if err := k8sClient.Delete(ctx, cfgObj); err != nil {
			b.Error(err)
		}
		srv.Close()
	}
}
