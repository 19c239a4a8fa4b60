package operator

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"podium.dev/podium/controllers"
	"podium.dev/podium/internal/preflight"
	"podium.dev/podium/internal/providers"
	"podium.dev/podium/internal/secrets"
	"podium.dev/podium/internal/secretsapi"
)

// setupSecrets registers the HostedSecret controller and mounts /v1/secrets and
// /v1/secrets/preflight, and records organizations' identity (OrgIdentityRecorder) and, on
// every namespace, its ServiceAccounts that are Podium users elsewhere
// (UserServiceAccountRecorder). Organizations
// are found by org_id through an id index of the
// (small, cluster-wide) Namespace cache; secrets by slot through a field index (both
// registered by package index).
func setupSecrets(mgr manager.Manager, o Options, c *components) error {
	if errs := validation.IsDNS1123Label(valueNamespace(o)); len(errs) > 0 {
		return fmt.Errorf("the secret value namespace %q is not a namespace name: %s", valueNamespace(o), strings.Join(errs, "; "))
	}
	pcfg, err := providers.LoadConfig(o.PreflightConfig)
	if err != nil {
		return err
	}

	lc := &secrets.Lifecycle{
		Client: mgr.GetClient(),
		Reader: mgr.GetAPIReader(),
		Slots:  &secrets.Slots{Client: mgr.GetClient(), Reader: mgr.GetAPIReader()},
		Place:  secrets.Place{Namespace: valueNamespace(o)},
		Events: mgr.GetEventRecorder("podium-hostedsecret"),
		Log:    mgr.GetLogger().WithName("secrets"),
	}
	c.Preflight, c.Secrets = pcfg, lc
	r := &controllers.HostedSecretReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Lifecycle: lc}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the HostedSecret controller: %w", err)
	}

	if err := (&controllers.GrantedRecorder{Client: mgr.GetClient(), ValueNamespace: valueNamespace(o)}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the granted Secrets recorder: %w", err)
	}
	if err := (&controllers.UserServiceAccountRecorder{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the recorder of ServiceAccounts that are users elsewhere: %w", err)
	}
	if err := (&controllers.OrgIdentityRecorder{Client: mgr.GetClient(), ValueNamespace: valueNamespace(o)}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the organization identity recorder: %w", err)
	}

	api := &secretsapi.API{Store: &secrets.Store{Lifecycle: lc}, Cache: mgr.GetClient(), Reviewer: c.Reviewer, Log: lc.Log}
	if o.FingerprintKeySecret.Name != "" {
		api.Keyring = &secrets.Keyring{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Secret: o.FingerprintKeySecret}
		r.Keyring = api.Keyring
		api.Store.Seats = &secrets.Seats{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Slots: lc.Slots}
	}
	for pattern, h := range api.Routes() {
		c.Routes[pattern] = h
	}
	mountPreflight(mgr, c)
	return nil
}

// setupReadPreflight mounts /v1/secrets/preflight in the read tier: HostedSecret objects
// and Datasets from its cache, never a value.
func setupReadPreflight(mgr manager.Manager, o Options, c *components) error {
	pcfg, err := providers.LoadConfig(o.PreflightConfig)
	if err != nil {
		return err
	}
	c.Preflight = pcfg
	mountPreflight(mgr, c)
	return nil
}

func mountPreflight(mgr manager.Manager, c *components) {
	c.Routes["POST /v1/secrets/preflight"] = &preflight.Handler{
		Config:   c.Preflight,
		Cache:    mgr.GetClient(),
		Reviewer: c.Reviewer,
		Log:      mgr.GetLogger().WithName("preflight"),
	}
}

func valueNamespace(o Options) string {
	if o.SecretValueNamespace != "" {
		return o.SecretValueNamespace
	}
	return DefaultSecretValueNamespace
}
