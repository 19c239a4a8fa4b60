package apikeys_test

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"podium.dev/podium/internal/accesstoken"
	"podium.dev/podium/internal/apikeys"
	"podium.dev/podium/internal/testenv"
)

// The read tier checks access tokens with the keys the operator publishes
// (docs/api-keys.md, "Keys in the read tier"); during a rollover ("Signing keys and their
// rollover") the tokens of both keys verify there, and once a key is removed from the
// Secret its tokens are refused there too. Done to the operator's real Secret, through
// the one origin, against the read tier process.
var _ = Describe("The read tier during an access-token key rollover", func() {
	It("reads with the tokens of both keys while both are published, and refuses a removed key's", func() {
		org := newOrg("rt-rollover")
		owner := newPerson(org, "owner", "podium-org-owner")
		k := createKey(owner, map[string]any{"name": "rollover"})
		lb, _ := privateBoard(org)
		show := map[string]any{"package": lb.Spec.Package, "name": lb.Spec.Name}
		read := func(bearer string) int {
			GinkgoHelper()
			code, _ := callOrigin(http.MethodPost, "/functions/v1/leaderboard-read", bearer, show)
			return code
		}
		code, out := callOrigin(http.MethodPost, "/functions/v1/api-key-exchange", "", map[string]any{"api_key": k.Key})
		Expect(code).To(Equal(http.StatusOK), string(out))
		current := decode[struct {
			AccessToken string `json:"access_token"`
		}](out).AccessToken
		Eventually(func() int { return read(current) }).Should(Equal(http.StatusOK))

		By("step 1: a second key is added to the Secret; the operator publishes it")
		name := client.ObjectKey{Namespace: testenv.DeliveryNamespace, Name: apikeys.TokenKeysSecret}
		sec := &corev1.Secret{}
		Expect(k8sClient.Get(ctx, name, sec)).To(Succeed())
		Expect(sec.Data).To(HaveKey(kidOf(current)))
		newKid, seed, err := apikeys.NewTokenKeySeed()
		Expect(err).NotTo(HaveOccurred())
		patch := client.MergeFrom(sec.DeepCopy())
		sec.Data[newKid] = seed
		Expect(k8sClient.Patch(ctx, sec, patch)).To(Succeed())
		removeNewKey := func() error {
			sec := &corev1.Secret{}
			if err := k8sClient.Get(ctx, name, sec); err != nil {
				return err
			}
			patch := client.MergeFrom(sec.DeepCopy())
			delete(sec.Data, newKid)
			return k8sClient.Patch(ctx, sec, patch)
		}
		DeferCleanup(removeNewKey)
		Eventually(func() []string {
			_, out := callOrigin(http.MethodGet, "/.well-known/jwks.json", "", nil)
			var set accesstoken.JWKS
			_ = json.Unmarshal(out, &set)
			kids := []string{}
			for _, k := range set.Keys {
				kids = append(kids, k.KeyID)
			}
			return kids
		}).WithTimeout(45*time.Second).Should(ContainElements(kidOf(current), newKid), "the operator reads the Secret every 30 s")

		By("a token of the new key (as it signs after step 3) and one of the previous key both read a private board")
		claims, err := accesstoken.NewClaims(owner.User, k.ID, time.Now(), time.Hour)
		Expect(err).NotTo(HaveOccurred())
		newTok, err := accesstoken.Sign(accesstoken.SigningKey{ID: newKid, Private: ed25519.NewKeyFromSeed(seed)}, claims)
		Expect(err).NotTo(HaveOccurred())
		// The read tier reads the set again at most every 5 s for a kid it does not hold.
		Eventually(func() int { return read(newTok) }).WithTimeout(15 * time.Second).Should(Equal(http.StatusOK))
		Expect(read(current)).To(Equal(http.StatusOK))

		By("step 4 for the new key (as if it had leaked): removed from the Secret, its token is refused at the read tier")
		Expect(removeNewKey()).To(Succeed())
		Eventually(func() int { return read(newTok) }).WithTimeout(45*time.Second).Should(Equal(http.StatusUnauthorized),
			"the read tier and the operator read the keys every 30 s, answers are kept 2 s")
		Expect(read(current)).To(Equal(http.StatusOK))
	})
})
