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
