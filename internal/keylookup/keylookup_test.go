package keylookup

import (
	"encoding/base64"
	"testing"

	"podium.dev/podium/internal/accesstoken"
	"podium.dev/podium/internal/apikeys"
)

// The read tier sends to the operator exactly the tokens the operator's key reviewer
// takes: the prefixes are apikeys' own.
func TestPrefixesAreTheKeyStores(t *testing.T) {
	if keyPrefix != apikeys.KeyPrefix || accessTokenPrefix != apikeys.AccessTokenPrefix {
		t.Fatalf("keylookup looks up %q and %q, apikeys makes %q and %q", keyPrefix, accessTokenPrefix, apikeys.KeyPrefix, apikeys.AccessTokenPrefix)
	}
	jwt := func(typ, iss string) string {
		enc := base64.RawURLEncoding
		return enc.EncodeToString([]byte(`{"alg":"EdDSA","typ":"`+typ+`"}`)) + "." + enc.EncodeToString([]byte(`{"iss":"`+iss+`"}`)) + ".c2ln"
	}
	for tok, want := range map[string]bool{
		"pdm_x": true, "pdmat_x": true, "eyJhbGciOi": false, "": false,
		jwt(accesstoken.Type, accesstoken.Issuer):                  true,  // the exchange's access token as a JWT
		jwt("JWT", "https://kubernetes.default.svc.cluster.local"): false, // a ServiceAccount token: TokenReview
		jwt(accesstoken.Type, "https://elsewhere.example"):         false,
	} {
		if IsKey(tok) != want {
			t.Errorf("IsKey(%q) = %v", tok, !want)
		}
	}
}
