package controllers

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/scheme"
)

// statusWriter writes a row's status as an update at its resourceVersion, like
// client.Status().Update, but asks for only the metadata back: the reconciler uses
// nothing of the answer but its error (the new version comes through the cache), so
// neither the apiserver encodes the whole row again nor the operator decodes it
// (docs/performance.md, "Rows in").
type statusWriter struct{ rc rest.Interface }

func newStatusWriter(mgr manager.Manager) (*statusWriter, error) {
	gvk := hubv1alpha1.GroupVersion.WithKind("LeaderboardRow")
	rc, err := apiutil.RESTClientForGVK(gvk, false, false, mgr.GetConfig(), serializer.NewCodecFactory(mgr.GetScheme()), mgr.GetHTTPClient())
	if err != nil {
		return nil, err
	}
	return &statusWriter{rc: rc}, nil
}

func (w *statusWriter) update(ctx context.Context, row *hubv1alpha1.LeaderboardRow) error {
	sent := *row // objects from the cache carry no kind, which a request body needs
	sent.TypeMeta = metav1.TypeMeta{APIVersion: hubv1alpha1.GroupVersion.String(), Kind: "LeaderboardRow"}
	body, err := json.Marshal(&sent)
	if err != nil {
		return err
	}
	return w.rc.Put().Namespace(row.Namespace).Resource("leaderboardrows").Name(row.Name).SubResource("status").
		SetHeader("Accept", scheme.MetadataOnly).SetHeader("Content-Type", "application/json").
		Body(body).Do(ctx).Error()
}
