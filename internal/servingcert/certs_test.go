package servingcert

import (
	"bytes"
	"crypto/x509"
	"testing"
	"time"
)

func mustPlan(t *testing.T, data map[string][]byte, names []string, now time.Time) (map[string][]byte, bool) {
	t.Helper()
	out, changed, err := Plan(data, names, now)
	if err != nil {
		t.Fatal(err)
	}
	return out, changed
}

// verify checks that the serving certificate of data chains to its CA bundle for name.
func verify(t *testing.T, data map[string][]byte, name string, at time.Time) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data[KeyCABundle]) {
		t.Fatal("no CA in the bundle")
	}
	leaf := decodeCerts(data[KeyCert])[0]
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: at}); err != nil {
		t.Fatalf("the serving certificate does not verify: %v", err)
	}
	if _, err := KeyPair(data); err != nil {
		t.Fatal(err)
	}
}

func TestPlanIssuesKeepsAndRenews(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	names := []string{"podium-webhook.podium-system.svc"}

	first, changed := mustPlan(t, nil, names, now)
	if !changed {
		t.Fatal("nothing stored yet: Plan must issue")
	}
	verify(t, first, names[0], now)

	same, changed := mustPlan(t, first, names, now.Add(24*time.Hour))
	if changed || !bytes.Equal(same[KeyCert], first[KeyCert]) {
		t.Fatal("a current certificate was replaced")
	}

	// A third of its life left: a new serving certificate from the same CA.
	renewAt := RenewAt(first)
	if got := renewAt.Sub(now); got < 240*24*time.Hour || got > 245*24*time.Hour {
		t.Fatalf("renewal after %v", got)
	}
	renewed, changed := mustPlan(t, first, names, renewAt.Add(time.Minute))
	if !changed || bytes.Equal(renewed[KeyCert], first[KeyCert]) {
		t.Fatal("the certificate was not renewed")
	}
	if !bytes.Equal(renewed[KeyCABundle], first[KeyCABundle]) || !bytes.Equal(renewed[KeyCAKey], first[KeyCAKey]) {
		t.Fatal("renewing the serving certificate replaced the CA")
	}
	verify(t, renewed, names[0], renewAt.Add(time.Minute))

	// A new name: a new certificate that covers it.
	more := append(names, "localhost")
	withName, changed := mustPlan(t, renewed, more, renewAt.Add(time.Hour))
	if !changed {
		t.Fatal("a missing DNS name did not renew the certificate")
	}
	verify(t, withName, "localhost", renewAt.Add(time.Hour))
}

func TestPlanRotatesTheCAKeepingTheOldOneTrusted(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	names := []string{"svc"}
	first, _ := mustPlan(t, nil, names, now)
	oldCA := decodeCerts(first[KeyCABundle])[0]
	// Shortly before the CA would expire within a new serving certificate's life (plus
	// its renewal margin), the serving certificate was renewed from the old CA ...
	turn := oldCA.NotAfter.Add(-servingValidity - renewBefore)
	prev, changed := mustPlan(t, first, names, turn.Add(-time.Hour))
	if !changed || !bytes.Equal(prev[KeyCAKey], first[KeyCAKey]) {
		t.Fatal("the serving certificate should have been renewed from the same CA")
	}
	// ... and just after it, the CA is rotated.
	late := turn.Add(time.Hour)
	rotated, changed := mustPlan(t, prev, names, late)
	if !changed {
		t.Fatal("the CA was not rotated")
	}
	bundle := decodeCerts(rotated[KeyCABundle])
	if len(bundle) != 2 || bundle[0].Equal(oldCA) || !bundle[1].Equal(oldCA) {
		t.Fatalf("the bundle should hold the new CA, then the old one; it holds %d", len(bundle))
	}
	verify(t, rotated, "svc", late)
	// The certificate a slower replica still serves stays trusted.
	verify(t, map[string][]byte{KeyCABundle: rotated[KeyCABundle], KeyCert: prev[KeyCert], KeyKey: prev[KeyKey]}, "svc", late)

	// Once the old CA has expired it leaves the bundle.
	after, _ := mustPlan(t, rotated, names, oldCA.NotAfter.Add(time.Hour))
	if n := len(decodeCerts(after[KeyCABundle])); n != 1 {
		t.Fatalf("an expired CA stayed in the bundle (%d CAs)", n)
	}
}

func TestPlanReplacesGarbage(t *testing.T) {
	now := time.Now()
	data, changed := mustPlan(t, map[string][]byte{KeyCABundle: []byte("x"), KeyCAKey: []byte("y"), KeyCert: []byte("z")}, []string{"svc"}, now)
	if !changed {
		t.Fatal("garbage was kept")
	}
	verify(t, data, "svc", now)
	if _, _, err := Plan(nil, nil, now); err == nil {
		t.Fatal("a certificate without names was issued")
	}
}
