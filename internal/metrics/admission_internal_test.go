package metrics

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func TestAdmissionResult(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp admission.Response
		want string
	}{
		{"allowed", admission.Allowed(""), ResultAllowed},
		{"patched", admission.PatchResponseFromRaw([]byte(`{}`), []byte(`{"a":1}`)), ResultAllowed},
		{"denied", admission.Denied("no"), ResultDenied},
		{"bad request", admission.Errored(http.StatusBadRequest, errors.New("x")), ResultDenied},
		{"server error", admission.Errored(http.StatusInternalServerError, errors.New("x")), ResultErrored},
	} {
		if got := admissionResult(tc.resp); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

type fixed admission.Response

func (f fixed) Handle(context.Context, admission.Request) admission.Response {
	return admission.Response(f)
}

// observed is the number of observations of the admission histogram's series.
func observed(t *testing.T, operation, result string) uint64 {
	t.Helper()
	m := &dto.Metric{}
	if err := admissionDuration.WithLabelValues(operation, result).(prometheus.Histogram).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

func TestTimeAdmissionObservesOperationAndResult(t *testing.T) {
	for _, tc := range []struct {
		op     admissionv1.Operation
		resp   admission.Response
		result string
	}{
		{admissionv1.Create, admission.Errored(http.StatusInternalServerError, errors.New("x")), ResultErrored},
		{admissionv1.Update, admission.Allowed(""), ResultAllowed},
		{admissionv1.Create, admission.Denied("no"), ResultDenied},
	} {
		before := observed(t, string(tc.op), tc.result)
		req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: tc.op}}
		resp := TimeAdmission(fixed(tc.resp)).Handle(context.Background(), req)
		if resp.Allowed != tc.resp.Allowed {
			t.Errorf("%s %s: the wrapper changed the response", tc.op, tc.result)
		}
		if got := observed(t, string(tc.op), tc.result); got != before+1 {
			t.Errorf("%s %s: %d observations, want %d", tc.op, tc.result, got, before+1)
		}
	}
}
