package secrets_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/onsi/gomega"
)

// TestMain stops the operator a benchmark started (the ginkgo suite stops its own).
func TestMain(m *testing.M) {
	code := m.Run()
	if benchStarted {
		if err := stopOperator(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
		}
	}
	os.Exit(code)
}

var benchStarted bool

// benchSetup starts the operator once for all benchmarks of a run and makes gomega's
// assertions fail the benchmark.
func benchSetup(b *testing.B) {
	b.Helper()
	gomega.RegisterFailHandler(func(message string, _ ...int) { b.Fatal(message) })
	if benchStarted {
		return
	}
	if err := startOperator(io.Discard); err != nil {
		b.Fatal(err)
	}
	benchStarted = true
}

// BenchmarkStoreRevoke is one first store and one revoke over HTTP: the write path
// (HostedSecret, Secret, pending status, pointer create, active status; then revoked
// status, Secret delete, pointer delete), each waiting for the replica's cache.
func BenchmarkStoreRevoke(b *testing.B) {
	benchSetup(b)
	o := newOrg("bench")
	p := newPerson(o, "owner", "podium-org-owner")
	b.ResetTimer()
	for range b.N {
		if code, body := store(p, map[string]any{"env_var": "BENCH_KEY", "value": "bench-value-1234"}); code != http.StatusCreated {
			b.Fatalf("store: %d %s", code, body)
		}
		if n := revoke(p, map[string]any{"env_var": "BENCH_KEY"}); n != 1 {
			b.Fatalf("revoke affected %d", n)
		}
	}
}

// BenchmarkSupersede is one confirmed replacement over HTTP (the swap of the pointer
// with a resourceVersion precondition, and the revocation of the replaced secret).
func BenchmarkSupersede(b *testing.B) {
	benchSetup(b)
	o := newOrg("bench")
	p := newPerson(o, "owner", "podium-org-owner")
	code, body := store(p, map[string]any{"env_var": "BENCH_KEY", "value": "bench-value-0000"})
	if code != http.StatusCreated {
		b.Fatalf("store: %d %s", code, body)
	}
	id := decode[record](body).ID
	b.ResetTimer()
	for range b.N {
		code, body := store(p, map[string]any{"env_var": "BENCH_KEY", "value": "bench-value-1111", "supersede_credential_id": id})
		if code != http.StatusCreated {
			b.Fatalf("supersede: %d %s", code, body)
		}
		id = decode[record](body).ID
	}
}

// BenchmarkList is GET /v1/secrets of an org with 100 active secrets, from the cache.
func BenchmarkList(b *testing.B) {
	benchSetup(b)
	o := newOrg("bench")
	p := newPerson(o, "owner", "podium-org-owner")
	for i := range 100 {
		if code, body := store(p, map[string]any{"env_var": fmt.Sprintf("KEY_%d", i), "value": "bench-value-2222"}); code != http.StatusCreated {
			b.Fatalf("store: %d %s", code, body)
		}
	}
	b.ResetTimer()
	for range b.N {
		if got := list(p, ""); len(got) != 100 {
			b.Fatalf("listed %d", len(got))
		}
	}
}

// BenchmarkPreflight is POST /v1/secrets/preflight for three agents, from the cache.
func BenchmarkPreflight(b *testing.B) {
	benchSetup(b)
	o := newOrg("bench")
	p := newPerson(o, "owner", "podium-org-owner")
	req := map[string]any{"config": map[string]any{"agents": []any{
		map[string]any{"name": "a", "model_name": "anthropic/claude", "secrets": []string{"ANTHROPIC_API_KEY"}},
		map[string]any{"name": "b", "model_name": "openai/gpt", "secrets": []string{"OPENAI_API_KEY"}},
		map[string]any{"name": "c", "model_name": "gemini/pro", "secrets": []string{"GEMINI_API_KEY"}},
	}}}
	b.ResetTimer()
	for range b.N {
		if code, body := call(http.MethodPost, "/v1/secrets/preflight", p.Token, req); code != http.StatusOK {
			b.Fatalf("preflight: %d %s", code, body)
		}
	}
}

// BenchmarkRegistryStoreRevoke is one first store and one revoke of a registry
// credential over HTTP: the store path above plus the fingerprint (an HMAC, the key in
// memory) and the seat (a list of the org's seats and a create or update).
func BenchmarkRegistryStoreRevoke(b *testing.B) {
	benchSetup(b)
	o := newOrg("bench")
	p := newPerson(o, "owner", "podium-org-owner")
	body := map[string]any{"display_name": "bench", "registry_host": "ghcr.io", "username": "bench", "password": "bench-token-1234"}
	b.ResetTimer()
	for range b.N {
		if code, out := call(http.MethodPost, "/v1/registry-credentials", p.Token, body); code != http.StatusCreated {
			b.Fatalf("store: %d %s", code, out)
		}
		if code, out := call(http.MethodDelete, "/v1/registry-credentials", p.Token, map[string]any{"display_name": "bench"}); code != http.StatusOK {
			b.Fatalf("revoke: %d %s", code, out)
		}
	}
}
