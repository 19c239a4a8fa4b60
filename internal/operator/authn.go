package operator

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"podium.dev/podium/internal/authn"
)

// reviewTTL is how long a TokenReview or SubjectAccessReview answer is reused: a revoked
// token or binding stops working within this time, and a polling client costs at most
// one review per TTL.
const reviewTTL = 10 * time.Second

func setupAuthn(mgr manager.Manager, o Options, c *components) error {
	r, err := authn.NewKubeReviewer(mgr.GetConfig(), reviewTTL)
	if err != nil {
		return err
	}
	c.Reviewer = r
	return nil
}
