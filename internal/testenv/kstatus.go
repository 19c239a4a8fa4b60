package testenv

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"podium.dev/podium/internal/scheme"
)

// Health computes obj's health as Flux and the other users of the kstatus library do,
// from the object as the apiserver serves it now (obj gives only its kind and key).
func Health(ctx context.Context, c client.Client, obj client.Object) (*status.Result, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme.Scheme)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
		return nil, err
	}
	return status.Compute(u)
}
