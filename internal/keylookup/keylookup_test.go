package keylookup

import (
	"testing"

	"podium.dev/podium/internal/apikeys"
)

// The read tier sends to the operator exactly the tokens the operator's key reviewer
// takes: the prefixes are apikeys' own.
func TestPrefixesAreTheKeyStores(t *testing.T) {
	if keyPrefix != apikeys.KeyPrefix || accessTokenPrefix != apikeys.AccessTokenPrefix {
		t.Fatalf("keylookup looks up %q and %q, apikeys makes %q and %q", keyPrefix, accessTokenPrefix, apikeys.KeyPrefix, apikeys.AccessTokenPrefix)
	}
	for tok, want := range map[string]bool{"pdm_x": true, "pdmat_x": true, "eyJhbGciOi": false, "": false} {
		if IsKey(tok) != want {
			t.Errorf("IsKey(%q) = %v", tok, !want)
		}
	}
}
