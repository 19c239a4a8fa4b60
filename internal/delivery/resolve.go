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
	"podium.dev/podium/internal/secrets"
)

// Delivery is one secret handed to a run.
type Delivery struct {
	// EnvVar is the variable of an env secret; for a registry credential
	// RegistryKeyPrefix and its server (RegistryKey).
	EnvVar string
	Secret *hubv1alpha1.HostedSecret
	// value only ever goes into the run Secret's data (RunSecret).
	value []byte
}

// Plan is what a run gets: the secrets delivered and the warnings for what it asked for
// and does not get.
type Plan struct {
	Delivered []Delivery
	// Pulls are the registry credentials delivered, as one imagePullSecret.
	Pulls    []Delivery
	Warnings []string
	// Missed says why, for each name asked for and not delivered (its metric).
	Missed []metrics.NotDeliveredReason
}

// Names are the delivered environment variables, in the order asked.
func (p Plan) Names() []string {
	out := make([]string, len(p.Delivered))
	for i, d := range p.Delivered {
		out[i] = d.EnvVar
	}
	return out
}

// RegistryNames are the display names of the registry credentials delivered.
func (p Plan) RegistryNames() []string {
	out := make([]string, len(p.Pulls))
	for i, d := range p.Pulls {
		out[i] = d.Secret.Spec.Registry.DisplayName
	}
	return out
}

// All are every secret the plan delivers.
func (p Plan) All() []Delivery { return append(append([]Delivery(nil), p.Delivered...), p.Pulls...) }

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
		d, err := r.active(ctx, secrets.Slot{Namespace: namespace, Scope: hubv1alpha1.ScopeOrg, DisplayName: name})
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
		d.EnvVar = RegistryKey(server)
		plan.Pulls = append(plan.Pulls, *d)
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
