package apikeys

import "testing"

func TestParseKey(t *testing.T) {
	for key, want := range map[string]string{
		"pdm_0123456789abcdef_secret": "0123456789abcdef",
		"pdm_0123456789ABCDEF_secret": "",
		"pdm_0123456789abcdeg_secret": "",
		"pdm_0123456789abcdef_":       "",
		"pdm_0123456789abcdefXsecret": "",
		"pdm_0123456789abcde_secret":  "",
		"pdmat_0123456789abcdef_x":    "",
		"0123456789abcdef_secret":     "",
		"":                            "",
	} {
		id, ok := parseKey(key)
		if ok != (want != "") || id != want {
			t.Errorf("parseKey(%q) = %q, %v; want %q", key, id, ok, want)
		}
	}
}
