package controllers

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ensureLabels patches the given labels onto obj when any is missing or different. A
// merge patch of labels alone touches nothing else, so it needs no resourceVersion.
func ensureLabels(ctx context.Context, c client.Client, obj client.Object, want map[string]string) error {
	base := obj.DeepCopyObject().(client.Object)
	if !setLabels(obj, want) {
		return nil
	}
	return c.Patch(ctx, obj, client.MergeFrom(base))
}

// setLabels sets want on obj's labels and reports whether anything changed.
func setLabels(obj client.Object, want map[string]string) bool {
	labels := obj.GetLabels()
	changed := false
	for k, v := range want {
		if labels[k] != v {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[k] = v
			changed = true
		}
	}
	if changed {
		obj.SetLabels(labels)
	}
	return changed
}

// rawJSON returns the bytes of an optional JSON field (nil when unset).
func rawJSON(j *apiextensionsv1.JSON) []byte {
	if j == nil {
		return nil
	}
	return j.Raw
}
