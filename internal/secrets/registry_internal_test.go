package secrets

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDockerConfigJSONRoundTrip(t *testing.T) {
	for _, pw := range []string{"ghp_token", "pa:ss\"wörd\n", "x"} {
		raw, err := DockerConfigJSON("ghcr.io", "bot", pw)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := RegistryPassword(raw, "ghcr.io")
		if !ok || got != pw {
			t.Errorf("RegistryPassword = %q, %v; want the password back", got, ok)
		}
		if _, ok := RegistryPassword(raw, "docker.io"); ok {
			t.Error("another server has no password")
		}
		// Only auth, as other tools write it.
		var cfg map[string]map[string]map[string]string
		if err := json.Unmarshal(raw, &cfg); err != nil {
			t.Fatal(err)
		}
		delete(cfg["auths"]["ghcr.io"], "password")
		only, _ := json.Marshal(cfg)
		if got, ok := RegistryPassword(only, "ghcr.io"); !ok || got != pw {
			t.Errorf("from auth: %q, %v", got, ok)
		}
	}
	if _, ok := RegistryPassword([]byte("not json"), "ghcr.io"); ok {
		t.Error("garbage has no password")
	}
}

func TestFingerprint(t *testing.T) {
	k1, k2 := []byte(strings.Repeat("k", 32)), []byte(strings.Repeat("q", 32))
	a := fingerprint(k1, []byte("hunter2"))
	if !strings.HasPrefix(a, FingerprintPrefix) || len(a) != len(FingerprintPrefix)+16 {
		t.Fatalf("fingerprint %q has the wrong shape", a)
	}
	if a != fingerprint(k1, []byte("hunter2")) {
		t.Error("the same value and key must give the same fingerprint")
	}
	if a == fingerprint(k1, []byte("hunter3")) {
		t.Error("another value must give another fingerprint")
	}
	if a == fingerprint(k2, []byte("hunter2")) {
		t.Error("another key must give another fingerprint: the key is what makes it unguessable")
	}
}

func TestRegistrySlotHash(t *testing.T) {
	a := Slot{Namespace: "o", Scope: "org", DisplayName: "GHCR bot"}
	if a.Hash() == (Slot{Namespace: "o", Scope: "org", DisplayName: "GHCR Bot"}).Hash() {
		t.Error("display names are exact")
	}
	if a.Hash() == (Slot{Namespace: "o", Scope: "user", EnvVar: "GHCR bot"}).Hash() {
		t.Error("an org slot never shares a hash with a user slot")
	}
}
