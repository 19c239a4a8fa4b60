package delivery

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/metrics"
	"podium.dev/podium/internal/providers"
	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/secrets"
)

// Delivery is one secret handed to a run.
type Delivery struct {
	// EnvVar is the delivery's entry in the run Secret's hub.podium.dev/hosted-secrets
	// annotation (its kind's FullRunKey): the variable of an env secret; for a registry
	// credential "registry:" and its server (RegistryKey).
	EnvVar string
	Secret *hubv1alpha1.HostedSecret
	// Kind is the secret's kind; nil is the kind of Secret (secretkind.Of).
	Kind *secretkind.Kind
	// value only ever goes into the run Secret's data (RunSecret).
	value []byte
}

// kind is the delivered secret's kind.
func (d Delivery) kind() *secretkind.Kind {
	if d.Kind != nil {
		return d.Kind
	}
	return secretkind.Of(d.Secret)
}

// Plan is what a run gets: the secrets delivered and the warnings for what it asked for
// and does not get.
type Plan struct {
	// Delivered are the secrets delivered, of every kind: env secrets in the order
	// asked, then registry credentials in the order asked.
	Delivered []Delivery
	Warnings  []string
	// Missed says why, for each name asked for and not delivered (its metric).
	Missed []metrics.NotDeliveredReason
}

// Of are the deliveries of kind k, in order.
func (p Plan) Of(k *secretkind.Kind) []Delivery {
	var out []Delivery
	for _, d := range p.Delivered {
		if d.kind() == k {
			out = append(out, d)
		}
	}
	return out
}

// NamesOf are the names (the kind's Name: env vars, display names) of the secrets of
// kind k delivered, in order: what admission records in k's DeliveredAnnotation.
func (p Plan) NamesOf(k *secretkind.Kind) []string {
	var out []string
	for _, d := range p.Of(k) {
		out = append(out, k.Name(&d.Secret.Spec))
	}
	return out
}

// Keys are the run Secret keys (EnvVar without the kind's RunKeyPrefix) of the
// deliveries of form f, in order.
func (p Plan) Keys(f secretkind.Form) []string {
	var out []string
	for _, d := range p.Delivered {
		if k := d.kind(); k.Form == f {
			out = append(out, strings.TrimPrefix(d.EnvVar, k.RunKeyPrefix))
		}
	}
	return out
}

// Names are the delivered environment variables, in the order asked.
func (p Plan) Names() []string { return p.Keys(secretkind.FormEnv) }

// counts are the deliveries by kind (spec.type), for metrics.CountDelivery.
func (p Plan) counts() map[hubv1alpha1.SecretType]int {
	out := map[hubv1alpha1.SecretType]int{}
	for _, d := range p.Delivered {
		out[d.kind().Type]++
	}
	return out
}

// Resolver chooses the secret of each name a run asks for.
type Resolver struct {
	// Cache is the manager's cache: HostedSecrets (with the slot index) and Podium's
	// Secrets.
	Cache client.Reader
	// API reads uncached: a value Secret the cache has not seen yet.
	API    client.Reader
	Config *providers.Config
	// Place says where values live (the org namespace or the operator's value namespace).
	Place secrets.Place
}

// Resolve returns what a run of requester in namespace gets for req: for each name the
// active job-scope secret of req.JobID, else requester's active user-scope secret;
// reserved names never. Missing and reserved names are warnings, never errors: an error
// means the apiserver could not be read.
func (r *Resolver) Resolve(ctx context.Context, namespace, requester string, req Request) (Plan, error) {
	plan := Plan{Warnings: append([]string(nil), req.Warnings...)}
	delivered := map[string]bool{}
	for _, name := range req.Names {
		if r.Config.IsReserved(name) {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s is reserved and never delivered%s", name, forModels(r.Config, req.Models, name)))
			plan.Missed = append(plan.Missed, metrics.NotDeliveredReserved)
			continue
		}
		var d *Delivery
		var err error
		if req.JobID != "" {
			d, err = r.active(ctx, secrets.Slot{Namespace: namespace, Scope: hubv1alpha1.ScopeJob, JobID: req.JobID, EnvVar: name})
			if err != nil {
				return Plan{}, err
			}
			// A job-scope secret belongs to whoever stored it (docs/secrets.md,
			// "Ownership"): job ids are not secrets (every member lists them), so a run
			// naming a job id gets the job's secret only when its requester stored it.
			if d != nil && !secrets.StoredBy(d.Secret, requester) {
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s of job %s was stored by another user; it is delivered only to that user's runs", name, req.JobID))
				plan.Missed = append(plan.Missed, metrics.NotDeliveredOtherUsersJob)
				d = nil
			}
		}
		if d == nil {
			d, err = r.active(ctx, secrets.Slot{Namespace: namespace, Scope: hubv1alpha1.ScopeUser, Owner: requester, EnvVar: name})
			if err != nil {
				return Plan{}, err
			}
		}
		if d == nil {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s is not delivered: %s%s", name, noActiveSecret(requester, req.JobID), forModels(r.Config, req.Models, name)))
			plan.Missed = append(plan.Missed, metrics.NotDeliveredNoActiveSecret)
			continue
		}
		delivered[name] = true
		plan.Delivered = append(plan.Delivered, *d)
	}
	plan.Warnings = append(plan.Warnings, modelWarnings(r.Config, req, delivered)...)
	// Registry credentials belong to the organization: whoever may create the run in it
	// gets them (docs/secrets.md, "Registry credentials").
	servers := map[string]string{}
	for _, name := range req.Registry {
		d, err := r.active(ctx, secrets.Slot{Namespace: namespace, Scope: secretkind.Registry.Scope, DisplayName: name})
		if err != nil {
			return Plan{}, err
		}
		if d == nil || d.Secret.Spec.Registry == nil {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("registry credential %q is not delivered: the organization has no active registry credential of that name", name))
			plan.Missed = append(plan.Missed, metrics.NotDeliveredNoRegistryCredential)
			continue
		}
		server := d.Secret.Spec.Registry.Server
		if first, dup := servers[server]; dup {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("registry credential %q is not delivered: %q already signs in to %s", name, first, server))
			plan.Missed = append(plan.Missed, metrics.NotDeliveredRegistryServerTaken)
			continue
		}
		servers[server] = name
		d.EnvVar = secretkind.Registry.FullRunKey(&d.Secret.Spec)
		plan.Delivered = append(plan.Delivered, *d)
	}
	return plan, nil
}

// active returns the slot's active secret with its value, nil when the slot has none or
// its value Secret is not usable (missing, not Podium's Secret of that HostedSecret).
func (r *Resolver) active(ctx context.Context, slot secrets.Slot) (*Delivery, error) {
	list := &hubv1alpha1.HostedSecretList{}
	if err := r.Cache.List(ctx, list, client.InNamespace(slot.Namespace), client.MatchingFields{secrets.SlotIndex: slot.Namespace + "/" + slot.Hash()}); err != nil {
		return nil, fmt.Errorf("listing the secrets of slot %s: %w", slot.Hash(), err)
	}
	var hs *hubv1alpha1.HostedSecret
	for i := range list.Items {
		o := &list.Items[i]
		if o.Status.State == hubv1alpha1.StateActive && o.DeletionTimestamp == nil && (hs == nil || o.CreationTimestamp.After(hs.CreationTimestamp.Time)) {
			hs = o
		}
	}
	if hs == nil {
		return nil, nil
	}
	// Wherever the value lives (secretRef; during a move the other side too), cached
	// first, then uncached (a value Secret the cache has not seen yet).
	s, err := r.Place.Find(ctx, hs, r.Cache, r.API)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, nil
	}
	// The value Secret serves the HostedSecret only when it is granted to it and bound
	// to its UID (the controller adopts by UID before the secret becomes active): a name
	// alone may have been reused.
	if granted, _ := secrets.Granted(s, hs); !granted {
		return nil, nil
	}
	if !secrets.IsBoundTo(s, hs) {
		return nil, nil
	}
	v := s.Data[secrets.DataKey(hs)]
	if len(v) == 0 {
		return nil, nil
	}
	return &Delivery{EnvVar: slot.EnvVar, Secret: hs, value: v}, nil
}

// noActiveSecret says where a name was looked for and found nothing.
func noActiveSecret(requester, jobID string) string {
	if jobID != "" {
		return "neither job " + jobID + " nor " + requester + " has an active secret for it"
	}
	return requester + " has no active secret for it"
}

// forModels names the models of the run whose provider authenticates with name.
func forModels(cfg *providers.Config, models []Model, name string) string {
	var which []string
	for _, m := range models {
		for _, v := range cfg.ProviderEnvVars(m.Provider) {
			if v == name {
				which = append(which, m.String())
				break
			}
		}
	}
	if len(which) == 0 {
		return ""
	}
	return " (needed by " + strings.Join(which, ", ") + ")"
}

// modelWarnings says which models of the run get no key their provider accepts.
func modelWarnings(cfg *providers.Config, req Request, delivered map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range req.Models {
		if seen[m.String()] {
			continue
		}
		seen[m.String()] = true
		if m.Provider == "" {
			out = append(out, fmt.Sprintf("%s: model %q has no provider/ prefix; no key was checked for it", hubv1alpha1.AnnotationModels, clip(m.Name)))
			continue
		}
		vars := cfg.ProviderEnvVars(m.Provider)
		if vars == nil {
			out = append(out, fmt.Sprintf("%s: provider %s of %s is not in the provider table; no key was checked for it", hubv1alpha1.AnnotationModels, m.Provider, m))
			continue
		}
		ok := false
		for _, v := range vars {
			ok = ok || delivered[v]
		}
		if !ok {
			sort.Strings(vars)
			out = append(out, fmt.Sprintf("%s gets no %s key: none of %s is delivered", m, m.Provider, strings.Join(vars, ", ")))
		}
	}
	return out
}
