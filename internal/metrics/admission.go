package metrics

import (
	"context"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TimeAdmission wraps an admission handler with podium_delivery_admission_duration_seconds.
func TimeAdmission(h admission.Handler) admission.Handler {
	return timedHandler{h}
}

type timedHandler struct{ next admission.Handler }

func (t timedHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	start := time.Now()
	resp := t.next.Handle(ctx, req)
	admissionDuration.WithLabelValues(string(req.Operation), admissionResult(resp)).Observe(time.Since(start).Seconds())
	return resp
}

// admissionResult is the result label of a response.
func admissionResult(resp admission.Response) string {
	if resp.Allowed {
		return ResultAllowed
	}
	if resp.Result != nil && resp.Result.Code >= http.StatusInternalServerError {
		return ResultErrored
	}
	return ResultDenied
}
