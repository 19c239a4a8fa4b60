// Package servingcert gives the operator's admission webhook its TLS certificate without
// anything installed in the cluster: a CA and a serving certificate kept in a Secret of
// the operator's namespace (shared by every replica), renewed before they expire, and
// the CA written into the webhook configuration's caBundle. With cert-manager the
// certificate comes from files instead (config/certmanager) and this issuer is off.
package servingcert

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"
)

// Keys of the certificate Secret.
const (
	KeyCABundle = "ca.crt" // the current CA, then the previous one while it is still valid
	KeyCAKey    = "ca.key"
	KeyCert     = "tls.crt"
	KeyKey      = "tls.key"
)

// Lifetimes. The serving certificate is renewed when a third of its life is left; the
// CA when it would expire before a serving certificate it signs. The previous CA stays
// in the bundle until it expires, so that replicas still serving the old certificate
// keep being trusted while they pick up the new one.
const (
	caValidity      = 5 * 365 * 24 * time.Hour
	servingValidity = 365 * 24 * time.Hour
	renewBefore     = servingValidity / 3
	backdate        = time.Hour // tolerates clock skew between replicas and the apiserver
)

// Plan returns the Secret data to store at now for a serving certificate covering
// dnsNames, and whether it differs from data (nil data: nothing stored yet). Pure but
// for randomness: everything it decides is testable with a clock.
func Plan(data map[string][]byte, dnsNames []string, now time.Time) (map[string][]byte, bool, error) {
	ca, caKey, bundle := parseCA(data, now)
	if ca == nil || ca.NotAfter.Before(now.Add(servingValidity+renewBefore)) {
		var err error
		if ca, caKey, err = newCA(now); err != nil {
			return nil, false, err
		}
		bundle = append([]*x509.Certificate{ca}, bundle...)
	}
	bundle = stillValid(bundle, now)
	if cert := parseServing(data, ca, dnsNames, now); cert != nil && len(data[KeyCABundle]) > 0 && bytes.Equal(encodeCerts(bundle), data[KeyCABundle]) {
		return data, false, nil
	}
	certPEM, keyPEM, err := newServing(ca, caKey, dnsNames, now)
	if err != nil {
		return nil, false, err
	}
	caKeyDER, err := x509.MarshalECPrivateKey(caKey)
	if err != nil {
		return nil, false, err
	}
	return map[string][]byte{
		KeyCABundle: encodeCerts(bundle),
		KeyCAKey:    pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: caKeyDER}),
		KeyCert:     certPEM,
		KeyKey:      keyPEM,
	}, true, nil
}

// RenewAt is when data's serving certificate should be replaced.
func RenewAt(data map[string][]byte) time.Time {
	certs := decodeCerts(data[KeyCert])
	if len(certs) == 0 {
		return time.Time{}
	}
	return certs[0].NotAfter.Add(-renewBefore)
}

// KeyPair returns the serving certificate of data for a TLS server.
func KeyPair(data map[string][]byte) (*tls.Certificate, error) {
	c, err := tls.X509KeyPair(data[KeyCert], data[KeyKey])
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// parseCA returns the current CA (first of the bundle, with its key) when it is valid at
// now, and every certificate of the bundle.
func parseCA(data map[string][]byte, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, []*x509.Certificate) {
	bundle := decodeCerts(data[KeyCABundle])
	block, _ := pem.Decode(data[KeyCAKey])
	if len(bundle) == 0 || block == nil {
		return nil, nil, bundle
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	ca := bundle[0]
	if err != nil || !ca.IsCA || now.After(ca.NotAfter) || !key.PublicKey.Equal(ca.PublicKey) {
		return nil, nil, bundle
	}
	return ca, key, bundle
}

// parseServing returns data's serving certificate if ca signed it, it covers dnsNames
// and it need not be renewed yet at now.
func parseServing(data map[string][]byte, ca *x509.Certificate, dnsNames []string, now time.Time) *x509.Certificate {
	certs := decodeCerts(data[KeyCert])
	if len(certs) == 0 {
		return nil
	}
	c := certs[0]
	if c.CheckSignatureFrom(ca) != nil || now.After(c.NotAfter.Add(-renewBefore)) || now.Before(c.NotBefore) {
		return nil
	}
	if _, err := tls.X509KeyPair(data[KeyCert], data[KeyKey]); err != nil {
		return nil
	}
	for _, n := range dnsNames {
		if !slices.Contains(c.DNSNames, n) {
			return nil
		}
	}
	return c
}

func stillValid(certs []*x509.Certificate, now time.Time) []*x509.Certificate {
	var out []*x509.Certificate
	for _, c := range certs {
		if now.Before(c.NotAfter) {
			out = append(out, c)
		}
	}
	return out
}

func newCA(now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "podium-webhook-ca", Organization: []string{"podium"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, err
}

func newServing(ca *x509.Certificate, caKey *ecdsa.PrivateKey, dnsNames []string, now time.Time) (certPEM, keyPEM []byte, err error) {
	if len(dnsNames) == 0 {
		return nil, nil, errors.New("no DNS name for the serving certificate")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		DNSNames:     dnsNames,
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.Add(servingValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

func decodeCerts(b []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return out
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil && block.Type == "CERTIFICATE" {
			out = append(out, c)
		}
	}
}

func encodeCerts(certs []*x509.Certificate) []byte {
	var buf bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return buf.Bytes()
}
