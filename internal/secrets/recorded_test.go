package secrets_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podium.dev/podium/internal/secrets"
)

func TestRecordList(t *testing.T) {
	long := strings.Repeat("a", 253)
	many := make([]string, 0, 300)
	for i := range 300 {
		many = append(many, long[:250]+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	for _, tc := range []struct {
		name     string
		names    []string
		want     string
		wantFits int
	}{
		{"none", nil, "", 0},
		{"sorted and each once", []string{"b", "a", "b"}, "a,b", 2},
		{"an empty name is never recorded", []string{"", "x"}, "x", 1},
		{"a name with a comma is never recorded", []string{"a,b", "c"}, "c", 1},
		{"as many as fit, in sorted order", many, "", (64 << 10) / 253},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, fits := secrets.RecordList(tc.names)
			if tc.want != "" && got != tc.want {
				t.Errorf("RecordList(%q) = %q, want %q", tc.names, got, tc.want)
			}
			if len(fits) != tc.wantFits {
				t.Errorf("RecordList(%d names) holds %d, want %d", len(tc.names), len(fits), tc.wantFits)
			}
			if len(got) > secrets.MaxRecordedBytes {
				t.Errorf("RecordList is %d bytes, more than %d", len(got), secrets.MaxRecordedBytes)
			}
			if parsed := secrets.RecordedNames(got); strings.Join(parsed, ",") != strings.Join(fits, ",") {
				t.Errorf("RecordedNames(RecordList) = %q, want %q", parsed, fits)
			}
		})
	}
}

func TestNeedsRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"podium-granted-github-token", false}, // reserved: protected by its name
		{"podium-granted-", false},
		{"github-token", true}, // a grant named before the rule
		{"podium-grantedx", true},
		{"podium-run-abc", true}, // a run Secret is never granted; if it were, only the record would name it
		{"Podium-granted-x", true},
	} {
		if got := secrets.NeedsRecord(tc.name); got != tc.want {
			t.Errorf("NeedsRecord(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestGrantedPrefixInPolicies: the admission policy that refuses a grant under another
// name spells the reserved prefix as GrantedPrefix does (the run policies, which refuse
// a Pod naming a granted Secret, are generated from GrantedPrefix by internal/admissiongen).
func TestGrantedPrefixInPolicies(t *testing.T) {
	for _, f := range []string{"run_secret_granted.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "config", "admission", f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "startsWith('"+secrets.GrantedPrefix+"')") {
			t.Errorf("%s does not test names against %q", f, secrets.GrantedPrefix)
		}
	}
}
