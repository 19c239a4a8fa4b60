// Package scheme holds the runtime scheme of the operator, the CLI and the tests:
// Kubernetes' built-in kinds and Podium's.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Scheme knows Kubernetes' built-in kinds and Podium's.
var Scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(hubv1alpha1.AddToScheme(Scheme))
}

// MetadataOnly is the Accept header that asks the apiserver to answer a write with the
// object's metadata (a PartialObjectMetadata) instead of the whole object: for writers
// that use nothing of the answer but its metadata, so that neither the apiserver encodes
// the whole object again nor the writer decodes it (docs/performance.md, "Rows in").
const MetadataOnly = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
