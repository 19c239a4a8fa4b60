package secretsapi

import (
	"net/http"
	"testing"

	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/secrets"
)

// TestEveryKindIsServed: each kind of the table has its handlers at its Path, and a
// kind that needs a fingerprint key or seats is not served without them.
func TestEveryKindIsServed(t *testing.T) {
	full := &API{Store: &secrets.Store{Seats: &secrets.Seats{}}, Keyring: &secrets.Keyring{}}
	bare := &API{Store: &secrets.Store{}}
	for _, k := range secretkind.Kinds {
		for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			pattern := m + " " + k.Path
			if full.Routes()[pattern] == nil {
				t.Errorf("kind %s: %s is not served", k.Type, pattern)
			}
			_, served := bare.Routes()[pattern]
			if needs := k.Fingerprinted || k.Seated; served == needs {
				t.Errorf("kind %s: %s served=%v without a keyring or seats", k.Type, pattern, served)
			}
		}
	}
	if n := len(full.Routes()); n != 3*len(secretkind.Kinds) {
		t.Errorf("%d routes; want 3 per kind", n)
	}
}
