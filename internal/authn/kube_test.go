package authn_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/testenv"
)

// newServiceAccount creates a ServiceAccount in a fresh namespace, binds it to the
// ClusterRole (if any) there, and returns its namespace and a token for it.
func newServiceAccount(role string) (ns, token string) {
	n, err := clientset.CoreV1().Namespaces().Create(ctx, testenv.Namespace("org"), metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	ns = n.Name
	token, err = testenv.ServiceAccountToken(ctx, clientset, ns, "runner", role)
	Expect(err).NotTo(HaveOccurred())
	return ns, token
}

var _ = Describe("KubeReviewer", func() {
	It("authenticates a ServiceAccount token and names its namespace", func() {
		ns, token := newServiceAccount("")
		r, err := authn.NewKubeReviewer(cfg, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		c, err := r.Authenticate(ctx, token)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Anonymous).To(BeFalse())
		Expect(c.User).To(Equal("system:serviceaccount:" + ns + ":runner"))
		Expect(c.ServiceAccountNamespace).To(Equal(ns))
		Expect(c.UID).NotTo(BeEmpty())
		Expect(c.Groups).To(ContainElements("system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated"))
	})

	It("refuses a token the apiserver does not accept", func() {
		r, err := authn.NewKubeReviewer(cfg, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		for _, tok := range []string{"not-a-token", ""} {
			_, err = r.Authenticate(ctx, tok)
			Expect(err).To(MatchError(authn.ErrInvalidToken))
		}
	})

	It("decides with SubjectAccessReviews in the org namespace, per the shipped roles", func() {
		r, err := authn.NewKubeReviewer(cfg, time.Minute)
		Expect(err).NotTo(HaveOccurred())
		memberNS, memberToken := newServiceAccount("podium-org-member")
		ownerNS, ownerToken := newServiceAccount("podium-org-owner")
		viewerNS, viewerToken := newServiceAccount("podium-viewer")
		member, err := r.Authenticate(ctx, memberToken)
		Expect(err).NotTo(HaveOccurred())
		owner, err := r.Authenticate(ctx, ownerToken)
		Expect(err).NotTo(HaveOccurred())
		viewer, err := r.Authenticate(ctx, viewerToken)
		Expect(err).NotTo(HaveOccurred())

		allowed := func(c *authn.Caller, ns, verb, resource string) bool {
			ok, err := r.Allowed(ctx, c, authn.Attributes{Namespace: ns, Verb: verb, Resource: resource})
			Expect(err).NotTo(HaveOccurred())
			return ok
		}
		type decision struct {
			c        *authn.Caller
			ns, verb string
			resource string
			want     bool
		}
		for _, d := range []decision{
			{member, memberNS, "get", "leaderboards", true},
			{member, memberNS, "create", "hostedsecrets", true},
			{member, memberNS, "list", "hostedsecrets", true},
			{member, memberNS, "delete", "hostedsecrets", true},
			{member, memberNS, "supersede", "hostedsecrets", false},
			{member, memberNS, "create", "leaderboards", false},
			{member, ownerNS, "get", "leaderboards", false},
			{owner, ownerNS, "supersede", "hostedsecrets", true},
			{owner, ownerNS, "create", "leaderboards", true},
			{owner, ownerNS, "delete", "leaderboardrows", true},
			{owner, memberNS, "get", "leaderboards", false},
			{viewer, viewerNS, "get", "leaderboards", true},
			{viewer, viewerNS, "list", "leaderboardrows", true},
			{viewer, viewerNS, "create", "hostedsecrets", false},
			{viewer, viewerNS, "list", "hostedsecrets", false},
		} {
			Expect(allowed(d.c, d.ns, d.verb, d.resource)).To(Equal(d.want), "%s may %s %s in %s", d.c.User, d.verb, d.resource, d.ns)
		}
		Expect(allowed(&authn.Caller{Anonymous: true}, memberNS, "get", "leaderboards")).To(BeFalse())
	})

	It("asks the apiserver once per TTL for the same token or decision, and again after it", func() {
		ns, token := newServiceAccount("podium-viewer")
		r, err := authn.NewKubeReviewer(countedCfg, time.Second)
		Expect(err).NotTo(HaveOccurred())
		tr0, sar0 := tokenReviews.Load(), accessReviews.Load()

		var c *authn.Caller
		for range 5 {
			c, err = r.Authenticate(ctx, token)
			Expect(err).NotTo(HaveOccurred())
			_, err = r.Authenticate(ctx, "bad-token")
			Expect(err).To(MatchError(authn.ErrInvalidToken))
			ok, err := r.Allowed(ctx, c, authn.Attributes{Namespace: ns, Verb: "get", Resource: "leaderboards"})
			Expect(err).NotTo(HaveOccurred())
			Expect(ok).To(BeTrue())
		}
		Expect(tokenReviews.Load()-tr0).To(Equal(int64(2)), "one review of the good token, one of the bad")
		Expect(accessReviews.Load() - sar0).To(Equal(int64(1)))

		// Anonymous callers never cost a review.
		ok, err := r.Allowed(ctx, &authn.Caller{Anonymous: true}, authn.Attributes{Namespace: ns, Verb: "get", Resource: "leaderboards"})
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
		Expect(accessReviews.Load() - sar0).To(Equal(int64(1)))

		Eventually(func(g Gomega) {
			_, err := r.Authenticate(ctx, token)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(tokenReviews.Load() - tr0).To(Equal(int64(3)))
		}).WithTimeout(5 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	})
})
