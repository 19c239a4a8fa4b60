package delivery

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/providers"
)

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        Request
		warnings    []string // substrings, one per warning
	}{
		{name: "nothing asked", annotations: nil, want: Request{}},
		{
			name:        "names trimmed, deduplicated, in order",
			annotations: map[string]string{hubv1alpha1.AnnotationSecrets: " B_KEY, A_KEY,,B_KEY "},
			want:        Request{Names: []string{"B_KEY", "A_KEY"}},
		},
		{
			name:        "a bad name is a warning",
			annotations: map[string]string{hubv1alpha1.AnnotationSecrets: "lower,OK"},
			want:        Request{Names: []string{"OK"}},
			warnings:    []string{`"lower" is not an environment variable name`},
		},
		{
			name:        "job id lower-cased",
			annotations: map[string]string{hubv1alpha1.AnnotationJobID: "6F9619FF-8B86-D011-B42D-00C04FC964FF"},
			want:        Request{JobID: "6f9619ff-8b86-d011-b42d-00c04fc964ff"},
		},
		{
			name:        "a bad job id is a warning",
			annotations: map[string]string{hubv1alpha1.AnnotationJobID: "{6F9619FF-8B86-D011-B42D-00C04FC964FF}"},
			want:        Request{},
			warnings:    []string{"is not a UUID"},
		},
		{
			name:        "models with and without agents",
			annotations: map[string]string{hubv1alpha1.AnnotationModels: "Anthropic/claude-opus-4, aider = openai/gpt-4o,local"},
			want: Request{Models: []Model{
				{Name: "Anthropic/claude-opus-4", Provider: "anthropic"},
				{Agent: "aider", Name: "openai/gpt-4o", Provider: "openai"},
				{Name: "local"},
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseRequest(tc.annotations)
			warnings := got.Warnings
			got.Warnings = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d", warnings, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %q does not say %q", warnings[i], w)
				}
			}
		})
	}
}

func TestParseRequestBoundsNames(t *testing.T) {
	var names []string
	for i := range maxNames + 5 {
		names = append(names, "K"+strings.Repeat("X", i%3)+string(rune('A'+i%26))+string(rune('A'+i/26)))
	}
	got := ParseRequest(map[string]string{hubv1alpha1.AnnotationSecrets: strings.Join(names, ",")})
	if len(got.Names) != maxNames || len(got.Warnings) != 5 {
		t.Errorf("got %d names and %d warnings, want %d and 5", len(got.Names), len(got.Warnings), maxNames)
	}
}

func TestModelWarnings(t *testing.T) {
	cfg := providers.Defaults()
	req := ParseRequest(map[string]string{hubv1alpha1.AnnotationModels: "a=anthropic/claude-opus-4,b=openai/gpt-4o,c=acme/x,d=plain,a=anthropic/claude-opus-4"})
	got := modelWarnings(cfg, req, map[string]bool{"ANTHROPIC_API_KEY": true})
	want := []string{"b (openai/gpt-4o) gets no openai key", "provider acme of c (acme/x) is not in the provider table", `model "plain" has no provider/ prefix`}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("warning %q does not say %q", got[i], want[i])
		}
	}
	if s := forModels(cfg, req.Models, "OPENAI_API_KEY"); s != " (needed by b (openai/gpt-4o))" {
		t.Errorf("forModels = %q", s)
	}
}

func TestUsedRoundTrip(t *testing.T) {
	used := []UsedSecret{{EnvVar: "B", Name: "b-x", UID: "u2"}, {EnvVar: "A", Name: "a-x", UID: "u1"}}
	s := FormatUsed(used)
	if s != "A=a-x/u1,B=b-x/u2" {
		t.Errorf("FormatUsed = %q", s)
	}
	if diff := cmp.Diff([]UsedSecret{used[1], used[0]}, ParseUsed(s+",broken,=x/y")); diff != "" {
		t.Errorf("ParseUsed (-want +got):\n%s", diff)
	}
}

func TestInjectEnv(t *testing.T) {
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers:     []corev1.Container{{Name: "a", Env: []corev1.EnvVar{{Name: "K2", Value: "mine"}}}},
	}
	warnings := InjectEnv(spec, "run-s", []string{"K1", "K2"})
	ref := func(k string) corev1.EnvVar {
		return corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "run-s"}, Key: k, Optional: ptr.To(false)}}}
	}
	if diff := cmp.Diff([]corev1.EnvVar{ref("K1"), ref("K2")}, spec.InitContainers[0].Env); diff != "" {
		t.Errorf("init container (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.EnvVar{{Name: "K2", Value: "mine"}, ref("K1")}, spec.Containers[0].Env); diff != "" {
		t.Errorf("container (-want +got):\n%s", diff)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "container a sets K2 itself") {
		t.Errorf("warnings = %q", warnings)
	}
}

func TestRunSecretHoldsOnlyValuesInData(t *testing.T) {
	hs := &hubv1alpha1.HostedSecret{}
	hs.Name, hs.UID = "k-abc", "uid-1"
	s := RunSecret("ns", "podium-run-x", KindJob, "alice", Plan{Delivered: []Delivery{{EnvVar: "K", Secret: hs, value: []byte("the-value")}}})
	if string(s.Data["K"]) != "the-value" || len(s.Data) != 1 {
		t.Errorf("data = %v", s.Data)
	}
	for k, v := range s.Annotations {
		if strings.Contains(v, "the-value") {
			t.Errorf("annotation %s holds the value", k)
		}
	}
	if s.Labels[hubv1alpha1.LabelManagedBy] != hubv1alpha1.ManagedByPodium || s.Labels[hubv1alpha1.LabelRunFor] != KindJob {
		t.Errorf("labels = %v", s.Labels)
	}
	if s.Labels[hubv1alpha1.LabelHostedSecret] != "" {
		t.Error("a run Secret must not look like a value Secret")
	}
}

func TestDecide(t *testing.T) {
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const maxAge, grace = 24 * time.Hour, 2 * time.Minute
	running := &RunOwner{UID: "u1"}
	for _, tc := range []struct {
		name     string
		age      time.Duration
		ownerUID types.UID
		owner    *RunOwner
		want     Verdict
	}{
		{"young, no run yet", time.Minute, "", nil, Verdict{RequeueAfter: time.Minute}},
		{"no run after the grace", grace, "", nil, Verdict{Delete: true, Reason: "no run was created with it"}},
		{"adopted, run gone", time.Minute, "u1", nil, Verdict{Delete: true, Reason: "its run is gone"}},
		{"run appeared: adopt", time.Minute, "", running, Verdict{Adopt: true, RequeueAfter: maxAge - time.Minute}},
		{"adopted, running", time.Hour, "u1", running, Verdict{RequeueAfter: maxAge - time.Hour}},
		{"another run with the label", time.Hour, "u0", running, Verdict{Delete: true, Reason: "its run was replaced"}},
		{"finished", time.Hour, "u1", &RunOwner{UID: "u1", Finished: true}, Verdict{Delete: true, Reason: "its run finished"}},
		{"too old", maxAge, "u1", running, Verdict{Delete: true, Reason: "it reached its maximum age"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(created.Add(tc.age), created, tc.ownerUID, tc.owner, maxAge, grace)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
