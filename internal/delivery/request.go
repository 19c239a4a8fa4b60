// Package delivery hands hosted secrets to the runs that ask for them: a batch/v1 Job or
// a bare Pod annotated hub.podium.dev/secrets gets, at admission, a run Secret holding
// the values it may have and env[].valueFrom.secretKeyRef entries pointing at it
// (docs/secrets.md, "Delivery into Jobs and Pods").
//
// The rules live here as pure functions (parsing the annotations, choosing the secret of
// each name, shaping the warnings); the admission handler and the run Secret clean-up
// call them. No value is ever put into a warning, a log line, an error or a status: a
// value goes from its value Secret into the run Secret's data and nowhere else.
package delivery

import (
	"fmt"
	"strings"

	"github.com/google/uuid"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/providers"
	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/secrets"
)

// maxNames bounds the names one run may ask for.
const maxNames = 64

// Model is one entry of hub.podium.dev/models: "provider/model" or "agent=provider/model".
type Model struct {
	Agent string
	Name  string
	// Provider is the model's provider (lower case), "" when the name has no "provider/".
	Provider string
}

// String names the model in a warning: "agent (model)" or "model".
func (m Model) String() string {
	if m.Agent != "" {
		return m.Agent + " (" + m.Name + ")"
	}
	return m.Name
}

// Request is what a Job or Pod asks for, read from its annotations.
type Request struct {
	// Names are the environment variables asked for, in order, without duplicates.
	Names []string
	// JobID is the job's UUID (lower case), "" when none (or an invalid one) was given.
	JobID  string
	Models []Model
	// Registry are the display names of the registry credentials asked for, in order,
	// without duplicates.
	Registry []string
	// Warnings say what in the annotations was ignored.
	Warnings []string
}

// Asks says whether annotations ask for secrets (or registry credentials) at all.
func Asks(annotations map[string]string) bool {
	return secretkind.AnyAnnotation(annotations, secretkind.AskAnnotations())
}

// ParseRequest reads the delivery annotations. Nothing in them blocks a run: what cannot
// be used becomes a warning.
func ParseRequest(annotations map[string]string) Request {
	var r Request
	seen := map[string]bool{}
	for _, n := range splitList(annotations[hubv1alpha1.AnnotationSecrets]) {
		switch {
		case hubv1alpha1.CheckEnvVar(n) != "":
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %q is not an environment variable name (A-Z, 0-9, _); ignored", hubv1alpha1.AnnotationSecrets, clip(n)))
		case seen[n]:
		case len(r.Names) == maxNames:
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: more than %d names; %s and the ones after it are ignored", hubv1alpha1.AnnotationSecrets, maxNames, n))
			seen[n] = true
		default:
			seen[n] = true
			r.Names = append(r.Names, n)
		}
	}
	if id, ok := annotations[hubv1alpha1.AnnotationJobID]; ok {
		id = strings.TrimSpace(id)
		if u, err := uuid.Parse(id); err == nil && len(id) == 36 {
			r.JobID = u.String()
		} else {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %q is not a UUID; job-scope secrets are not looked up", hubv1alpha1.AnnotationJobID, clip(id)))
		}
	}
	seenReg := map[string]bool{}
	for _, n := range splitList(annotations[hubv1alpha1.AnnotationRegistryCredentials]) {
		switch {
		case hubv1alpha1.CheckDisplayName(n) != "":
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %q is not a registry credential's display name; ignored", hubv1alpha1.AnnotationRegistryCredentials, clip(n)))
		case seenReg[n]:
		case len(r.Registry) == secrets.MaxRegistryCredentials:
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: more than %d names; %s and the ones after it are ignored", hubv1alpha1.AnnotationRegistryCredentials, secrets.MaxRegistryCredentials, n))
			seenReg[n] = true
		default:
			seenReg[n] = true
			r.Registry = append(r.Registry, n)
		}
	}
	for _, m := range splitList(annotations[hubv1alpha1.AnnotationModels]) {
		model := Model{Name: m}
		if agent, name, ok := strings.Cut(m, "="); ok {
			model = Model{Agent: strings.TrimSpace(agent), Name: strings.TrimSpace(name)}
		}
		if strings.Contains(model.Name, "/") {
			model.Provider = providers.ProviderOf(model.Name)
		}
		r.Models = append(r.Models, model)
	}
	return r
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// clip keeps a quoted piece of an annotation short in a warning.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
