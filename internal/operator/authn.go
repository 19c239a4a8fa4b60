package operator

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"podium.dev/podium/internal/apikeys"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/keylookup"
	"podium.dev/podium/internal/secrets"
)

// reviewTTL is how long a TokenReview or SubjectAccessReview answer is reused: a revoked
// token or binding stops working within this time, and a polling client costs at most
// one review per TTL.
const reviewTTL = 10 * time.Second

// apiKeySigningSecret is the operator-only Secret (in the value namespace) whose key
// signs the access tokens of API-key exchanges.
const apiKeySigningSecret = "podium-api-key-signing-key"

// setupAuthn makes the reviewer of every HTTP request: Podium API keys and their access
// tokens (docs/api-keys.md) in front of Kubernetes' TokenReview and SubjectAccessReview,
// and mounts /v1/api-keys, /v1/api-key-exchange and the read tier's key lookup.
func setupAuthn(mgr manager.Manager, o Options, c *components) error {
	kube, err := authn.NewKubeReviewer(mgr.GetConfig(), reviewTTL)
	if err != nil {
		return err
	}
	keys := &apikeys.Store{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: valueNamespace(o)}
	signer := &secrets.Keyring{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Secret: types.NamespacedName{Namespace: valueNamespace(o), Name: apiKeySigningSecret}}
	r := apikeys.NewReviewer(kube, keys, signer)
	c.Reviewer = r
	for pattern, h := range apikeys.NewAPI(r, mgr.GetLogger().WithName("api-keys")).Routes() {
		c.Routes[pattern] = h
	}
	if o.ReadTierUser != "" {
		c.Routes["POST "+keylookup.Path] = &keylookup.Handler{Keys: r, ReadTier: o.ReadTierUser, Log: mgr.GetLogger().WithName("key-lookup")}
	}
	return nil
}

// setupReadAuthn makes the read tier's reviewer: Kubernetes tokens by its own TokenReview
// and SubjectAccessReview; access tokens checked with the public keys the operator
// publishes, then, like API keys, looked up at the operator (keylookup), since their
// records are Secrets the read tier may not read.
func setupReadAuthn(mgr manager.Manager, o Options, c *components) error {
	kube, err := authn.NewKubeReviewer(mgr.GetConfig(), reviewTTL)
	if err != nil {
		return err
	}
	c.Reviewer = &keylookup.Reviewer{Next: kube, Operator: o.OperatorURL, Token: keylookup.TokenOf(mgr.GetConfig())}
	return nil
}
