package secrets

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

const (
	job1 = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"
)

func TestLast4(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"short":               "",
		"1234567":             "",
		"12345678":            "5678",
		"sk-ant-0123456789ab": "89ab",
		"ééééééééçà":          "ééçà",
	} {
		if got := Last4([]byte(in)); got != want {
			t.Errorf("Last4(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Last4([]byte{0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xf8}); got != "" {
		t.Errorf("Last4(binary) = %q, want empty", got)
	}
}

func TestSlotHash(t *testing.T) {
	hs := func(scope hubv1alpha1.SecretScope, owner, job, env string) *hubv1alpha1.HostedSecret {
		return &hubv1alpha1.HostedSecret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "acme"},
			Spec:       hubv1alpha1.HostedSecretSpec{Scope: scope, Owner: owner, JobID: job, EnvVar: env},
		}
	}
	base := SlotOf(hs("user", "alice", "", "X"))
	if got := SlotOf(hs("", "alice", "", "X")); got != base {
		t.Errorf("the default scope is not user: %+v", got)
	}
	if a, b := SlotOf(hs("job", "", job1, "X")), SlotOf(hs("job", "", strings.ToUpper(job1), "X")); a.Hash() != b.Hash() {
		t.Error("a job id's case changes its slot")
	}
	distinct := map[string]string{}
	for name, s := range map[string]Slot{
		"base":        base,
		"other user":  SlotOf(hs("user", "bob", "", "X")),
		"other env":   SlotOf(hs("user", "alice", "", "Y")),
		"job":         SlotOf(hs("job", "", job1, "X")),
		"owner = job": SlotOf(hs("user", job1, "", "X")),
	} {
		if len(s.Hash()) != 40 || len(s.PointerName()) > 63 {
			t.Errorf("%s: hash %q, pointer %q", name, s.Hash(), s.PointerName())
		}
		if prev, dup := distinct[s.Hash()]; dup {
			t.Errorf("%s and %s share a slot", name, prev)
		}
		distinct[s.Hash()] = name
	}
}

func TestObjectName(t *testing.T) {
	n := objectName("ANTHROPIC_API_KEY")
	if !strings.HasPrefix(n, "anthropic-api-key-") || len(n) != len("anthropic-api-key-")+10 {
		t.Errorf("objectName = %q", n)
	}
	long := objectName("A" + strings.Repeat("_", 63))
	if len(long) > 63 || strings.Contains(long, "_") {
		t.Errorf("objectName of a long name = %q", long)
	}
	// Two stores of the same env var get two names: the suffix is random.
	if first, second := objectName("X"), objectName("X"); first == second {
		t.Errorf("two names for the same env var are equal: %q", first)
	}
}
