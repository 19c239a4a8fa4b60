package apikeys_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// badKey is a key-shaped token no key matches: a fresh id each time, so that nothing
// about it can be cached.
func badKey() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "pdm_" + hex.EncodeToString(b) + "_" + hex.EncodeToString(b) + "not-a-secret"
}

// The limits of the exchange and of key-shaped bearer tokens (docs/api-keys.md,
// "Brute force").
var _ = Describe("API key limits", func() {
	It("count a failed exchange before checking it: of 200 parallel bad exchanges from one address, only the budget is answered", func() {
		hc := clientFrom("127.0.0.9")
		hc.Transport.(*http.Transport).DisableKeepAlives = false
		hc.Transport.(*http.Transport).MaxIdleConnsPerHost = 200
		var unauthorized, limited, other atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 200 {
			wg.Go(func() {
				<-start
				code, _ := callFrom(hc, http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": badKey()})
				switch code {
				case http.StatusUnauthorized:
					unauthorized.Add(1)
				case http.StatusTooManyRequests:
					limited.Add(1)
				default:
					other.Add(1)
				}
			})
		}
		t0 := time.Now()
		close(start)
		wg.Wait()
		elapsed := time.Since(t0)
		// The budget: 10 at once, then one more every 6 seconds the burst took.
		budget := 10 + int(elapsed/(6*time.Second))
		AddReportEntry("200 parallel bad exchanges", fmt.Sprintf("%d answered 401, %d 429, in %s", unauthorized.Load(), limited.Load(), elapsed))
		Expect(other.Load()).To(BeZero())
		Expect(unauthorized.Load()).To(BeNumerically(">=", 10))
		Expect(unauthorized.Load()).To(BeNumerically("<=", budget), "answered 401 past the per-address budget")
		Expect(unauthorized.Load() + limited.Load()).To(Equal(int64(200)))
	})

	It("let valid keys exchange and valid access tokens sign in during a flood of bad keys at 300 per second", func() {
		org := newOrg("apikeyflood")
		owner := newPerson(org, "owner", "podium-org-owner")
		keys := make([]string, 10)
		for i := range keys {
			keys[i] = createKey(owner, map[string]any{}).Key
		}
		// Access tokens from an eleventh key, exchanged before the flood: none of them
		// has been used, so none is in the reviewer's cache of verified tokens.
		extra := createKey(owner, map[string]any{}).Key
		tokens := make([]string, 10)
		for i := range tokens {
			code, out := call(http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": extra})
			Expect(code).To(Equal(http.StatusOK), string(out))
			tokens[i] = decode[struct {
				AccessToken string `json:"access_token"`
			}](out).AccessToken
		}

		By("flooding at 300/s until the valid requests are done: bad keys as bearers and at the exchange, from 10 addresses")
		// The flood lasts until the valid requests below are done (at most maxFlood, so
		// the loop ends by itself), so they fall inside it whatever the machine's speed.
		const rate, maxFlood = 300, 30 * time.Second
		stop := make(chan struct{})
		floodClients := make([]*http.Client, 10)
		for i := range floodClients {
			floodClients[i] = clientFrom(fmt.Sprintf("127.0.0.%d", 201+i))
		}
		var sent, floodOK atomic.Int64
		var flood sync.WaitGroup
		sem := make(chan struct{}, 256)
		t0 := time.Now()
		flood.Go(func() {
			// Request n leaves at t0 + n/rate (a late tick sends the ones due since), up
			// to rate*duration requests: the loop ends by itself.
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			limit := rate * int64(maxFlood/time.Second)
			for sent.Load() < limit {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				due := int64(time.Since(t0) * rate / time.Second)
				for sent.Load() < min(due, limit) {
					sem <- struct{}{}
					n := sent.Add(1)
					flood.Go(func() {
						defer func() { <-sem }()
						hc := floodClients[n%int64(len(floodClients))]
						var code int
						if n%2 == 0 {
							code, _ = callFrom(hc, http.MethodGet, "/v1/api-keys", badKey(), nil)
						} else {
							code, _ = callFrom(hc, http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": badKey()})
						}
						if code < 400 {
							floodOK.Add(1)
						}
					})
				}
			}
		})

		// Past the first 300 bad requests, the failure budgets (100 at once) are spent.
		Eventually(sent.Load).Should(BeNumerically(">=", 300))
		pace := time.NewTicker(200 * time.Millisecond) // the valid requests spread over the flood
		defer pace.Stop()
		// From one of the flooding addresses: its exchange budget is spent, and a key the
		// operator made is no guess.
		valid := clientFrom("127.0.0.201")
		exchanged, signedIn := 0, 0
		for i := range keys {
			code, out := callFrom(valid, http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": keys[i]})
			if code == http.StatusOK {
				exchanged++
			} else {
				GinkgoWriter.Printf("valid exchange %d: %d %s\n", i, code, out)
			}
			code, out = callFrom(valid, http.MethodGet, "/v1/api-keys", tokens[i], nil)
			if code == http.StatusOK {
				signedIn++
			} else {
				GinkgoWriter.Printf("valid access token %d: %d %s\n", i, code, out)
			}
			<-pace.C
		}
		close(stop)
		during, flooded := time.Since(t0), sent.Load()
		flood.Wait()
		AddReportEntry("flood", fmt.Sprintf("flood: %d bad requests sent in %s (%.0f/s) while the valid checks ran; %d in all\n",
			flooded, during, float64(flooded)/during.Seconds(), sent.Load()))
		Expect(during).To(BeNumerically("<", maxFlood), "the valid requests must fall inside the flood")
		Expect(float64(flooded)/during.Seconds()).To(BeNumerically(">=", 250), "the flood ran slower than asked")
		Expect(floodOK.Load()).To(BeZero())
		Expect(exchanged).To(Equal(10), "valid exchanges during the flood")
		Expect(signedIn).To(Equal(10), "valid access tokens during the flood")
	})
})
