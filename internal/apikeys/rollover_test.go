package apikeys_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/accesstoken"
	"podium.dev/podium/internal/apikeys"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/secrets"
)

// noKube is the next reviewer of a reviewer that sees only API keys and access tokens.
type noKube struct{}

func (noKube) Authenticate(context.Context, string) (*authn.Caller, error) {
	return nil, authn.ErrInvalidToken
}

func (noKube) Allowed(context.Context, *authn.Caller, authn.Attributes) (bool, error) {
	return false, nil
}

// The rollover of docs/api-keys.md ("Signing keys and their rollover"), done to the
// Secret as its steps say, against a reviewer that reads the Secret on every use (the
// operator reads it every apikeys.TokenKeyRefresh).
var _ = Describe("Access-token key rollover", func() {
	It("verifies the previous key's tokens while both keys are in the Secret, and refuses them once it is removed", func() {
		ns := newOrg("at-rollover")
		alice := newPerson(ns, "alice", "podium-org-owner")
		store := &apikeys.Store{Client: k8sClient, Reader: k8sClient, Namespace: ns}
		r := apikeys.NewReviewer(noKube{}, store, &secrets.Keyring{Client: k8sClient, Reader: k8sClient,
			Secret: types.NamespacedName{Namespace: ns, Name: "podium-api-key-signing-key"}})
		r.TokenKeys.Refresh = 1 // every use reads the Secret
		_, key, err := r.Create(ctx, authn.NewCaller[[]string](alice.User, "", []string{"system:serviceaccounts"}, nil), "rollover", 0)
		Expect(err).NotTo(HaveOccurred())
		c, err := r.VerifyKey(ctx, key)
		Expect(err).NotTo(HaveOccurred())
		exchange := func() string {
			GinkgoHelper()
			tok, _, err := r.Exchange(ctx, c)
			Expect(err).NotTo(HaveOccurred())
			return tok
		}
		signsIn := func(tok string) error { _, err := r.Authenticate(ctx, tok); return err }

		By("the first exchange makes the Secret with one key, current")
		oldTok := exchange()
		sec := &corev1.Secret{}
		name := client.ObjectKey{Namespace: ns, Name: apikeys.TokenKeysSecret}
		Expect(k8sClient.Get(ctx, name, sec)).To(Succeed())
		oldKid := string(sec.Data["current"])
		Expect(sec.Data).To(HaveLen(2))
		Expect(kidOf(oldTok)).To(Equal(oldKid))
		Expect(signsIn(oldTok)).To(Succeed())

		By("step 1: a new key is added; it verifies but the current key still signs")
		newKid, seed, err := apikeys.NewTokenKeySeed()
		Expect(err).NotTo(HaveOccurred())
		patch := client.MergeFrom(sec.DeepCopy())
		sec.Data[newKid] = seed
		Expect(k8sClient.Patch(ctx, sec, patch)).To(Succeed())
		Expect(kidOf(exchange())).To(Equal(oldKid))
		set, err := r.TokenKeys.Public(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(set).To(HaveKey(newKid))
		Expect(set).To(HaveKey(oldKid))

		By("(step 2: wait for every replica; here each use reads the Secret) step 3: the new key is made current: it signs, and the previous key's token still verifies")
		patch = client.MergeFrom(sec.DeepCopy())
		sec.Data["current"] = []byte(newKid)
		Expect(k8sClient.Patch(ctx, sec, patch)).To(Succeed())
		newTok := exchange()
		Expect(kidOf(newTok)).To(Equal(newKid))
		Expect(signsIn(newTok)).To(Succeed())
		Expect(signsIn(oldTok)).To(Succeed())
		v, err := r.Verifier(ctx)
		Expect(err).NotTo(HaveOccurred())
		_, err = v.Verify(oldTok)
		Expect(err).NotTo(HaveOccurred(), "checked afresh, not from the reviewer's cache")

		By("step 4: the previous key is removed: its tokens are refused, the current key's still sign in")
		patch = client.MergeFrom(sec.DeepCopy())
		delete(sec.Data, oldKid)
		Expect(k8sClient.Patch(ctx, sec, patch)).To(Succeed())
		Expect(k8sClient.Get(ctx, name, sec)).To(Succeed())
		Expect(sec.Data).NotTo(HaveKey(oldKid))
		v, err = r.Verifier(ctx)
		Expect(err).NotTo(HaveOccurred())
		_, err = v.Verify(oldTok)
		Expect(errors.Is(err, accesstoken.ErrInvalid)).To(BeTrue(), "%v", err)
		Eventually(func() error { return signsIn(oldTok) }).Should(MatchError(apikeys.ErrInvalid), "within the reuse of a check (2 s)")
		Expect(signsIn(newTok)).To(Succeed())

		By("a Secret whose current names no key of it: no token is signed or verified (fail closed)")
		patch = client.MergeFrom(sec.DeepCopy())
		sec.Data["current"] = []byte(oldKid)
		Expect(k8sClient.Patch(ctx, sec, patch)).To(Succeed())
		_, _, err = r.Exchange(ctx, c)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).NotTo(ContainSubstring(string(seed)))
		_, err = r.Verifier(ctx)
		Expect(err).To(HaveOccurred())
	})
})

// An operator of the previous release handed out pdmat_ tokens (an HMAC under the
// Secret podium-api-key-signing-key); after the upgrade they sign in until they expire
// (docs/api-keys.md, "Upgrading"), and no new one is made.
var _ = Describe("Access tokens of the previous release", func() {
	It("sign in until they expire, and stop with their key", func() {
		ns := newOrg("at-legacy")
		alice := newPerson(ns, "alice", "podium-org-owner")
		now := time.Now()
		store := &apikeys.Store{Client: k8sClient, Reader: k8sClient, Namespace: ns, Now: func() time.Time { return now }}
		keyring := &secrets.Keyring{Client: k8sClient, Reader: k8sClient, Secret: types.NamespacedName{Namespace: ns, Name: "podium-api-key-signing-key"}}
		r := apikeys.NewReviewer(noKube{}, store, keyring)
		rec, key, err := r.Create(ctx, authn.NewCaller[[]string](alice.User, "", nil, nil), "legacy", 0)
		Expect(err).NotTo(HaveOccurred())
		legacy := func(id string, exp time.Time) string {
			payload := id + "." + strconv.FormatInt(exp.Unix(), 10)
			mac, err := keyring.MAC(ctx, "podium-api-key-access-token", []byte(payload))
			Expect(err).NotTo(HaveOccurred())
			return "pdmat_" + base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(mac)
		}
		tok := legacy(rec.ID, now.Add(apikeys.AccessTokenTTL))
		c, err := r.Authenticate(ctx, tok)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.User).To(Equal(alice.User))
		Expect(c.APIKeyID).To(Equal(rec.ID))

		By("an exchange now makes a JWT, not a pdmat_ token")
		kc, err := r.VerifyKey(ctx, key)
		Expect(err).NotTo(HaveOccurred())
		jwt, _, err := r.Exchange(ctx, kc)
		Expect(err).NotTo(HaveOccurred())
		Expect(jwt).NotTo(HavePrefix("pdmat_"))
		Expect(kidOf(jwt)).NotTo(BeEmpty())

		By("expired, or with a MAC of another payload: refused")
		_, err = r.Authenticate(ctx, legacy(rec.ID, now.Add(-time.Second)))
		Expect(err).To(MatchError(apikeys.ErrInvalid))
		other := legacy(rec.ID, now.Add(time.Minute))
		_, err = r.Authenticate(ctx, other[:len(other)-2]+"AA")
		Expect(err).To(MatchError(apikeys.ErrInvalid))

		By("revoked: refused within the reuse of a check")
		ok, err := store.Revoke(ctx, alice.User, rec.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Eventually(func() error { _, err := r.Authenticate(ctx, tok); return err }).Should(MatchError(apikeys.ErrInvalid))
		Eventually(func() error { _, err := r.Authenticate(ctx, jwt); return err }).Should(MatchError(apikeys.ErrInvalid))
	})
})
