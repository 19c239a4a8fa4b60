package operator

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// AdmissionProbeName is the name of the LeaderboardRow the readiness probe creates with
// a server-side dry run (never stored).
const AdmissionProbeName = "podium-admission-probe"

// admissionProbe is a readiness check of the HTTP server: a replica is not ready until
// the apiserver admits a leaderboard row through Podium's admission policies. Right
// after the CRDs are created (a fresh install) the apiserver refuses every row for a few
// seconds, 503 "Resource kind ... not found", until the CRD's schema reaches the mutating
// admission policies (config/admission/row_metadata.yaml); without this check `kubectl
// rollout status` could return inside that window and the user's first `kubectl apply`
// of rows would fail (docs/deploy.md, "Install"). Once passed, the check stays passed:
// it gates the start, it does not follow the policies afterwards.
type admissionProbe struct {
	client    client.Client
	namespace string
	log       logr.Logger
	interval  time.Duration
	passed    atomic.Bool
}

var _ manager.LeaderElectionRunnable = &admissionProbe{}

// setupAdmissionProbe adds the probe when o names a namespace for it.
func setupAdmissionProbe(mgr manager.Manager, o Options, c *components) error {
	if o.AdmissionProbeNamespace == "" {
		return nil
	}
	p := &admissionProbe{client: mgr.GetClient(), namespace: o.AdmissionProbeNamespace,
		log: mgr.GetLogger().WithName("admission-probe"), interval: 500 * time.Millisecond}
	c.Ready = append(c.Ready, p.passed.Load)
	return mgr.Add(p)
}

// NeedLeaderElection is false: every replica serves, so every replica checks.
func (p *admissionProbe) NeedLeaderElection() bool { return false }

// Start tries until a dry-run create passes, then returns (the manager keeps running).
func (p *admissionProbe) Start(ctx context.Context) error {
	tries := 0
	err := wait.PollUntilContextCancel(ctx, p.interval, true, func(ctx context.Context) (bool, error) {
		tries++
		err := AdmissionInForce(ctx, p.client, p.namespace)
		if err != nil && tries%20 == 0 {
			p.log.Info("The apiserver does not admit leaderboard rows yet; not ready", "tries", tries, "error", err.Error())
		}
		return err == nil, nil
	})
	if err != nil {
		return nil // the manager is stopping
	}
	p.passed.Store(true)
	p.log.V(1).Info("The apiserver admits leaderboard rows through Podium's admission policies", "tries", tries)
	return nil
}

// AdmissionInForce makes one server-side dry-run create of a row in namespace; nil when
// the row comes back with its creator recorded, which only podium-row-metadata writes.
func AdmissionInForce(ctx context.Context, c client.Client, namespace string) error {
	row := &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: AdmissionProbeName},
		Spec:       hubv1alpha1.LeaderboardRowSpec{Leaderboard: AdmissionProbeName},
	}
	if err := c.Create(ctx, row, client.DryRunAll); err != nil {
		return err
	}
	if row.Annotations[hubv1alpha1.AnnotationCreatedBy] == "" {
		return ErrAdmissionNotInForce
	}
	return nil
}

// ErrAdmissionNotInForce is AdmissionInForce's answer when the apiserver admitted the
// row without Podium's row metadata policy.
var ErrAdmissionNotInForce = errors.New("the row came back without hub.podium.dev/created-by: podium-row-metadata is not in force")
