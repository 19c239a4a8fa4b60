package operator_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/operator"
	"podium.dev/podium/internal/scheme"
	"podium.dev/podium/internal/testenv"
)

// A new read replica (docs/performance.md, "Scale-out") is Ready only once every board it
// serves is ranked: the first read after /readyz answers 200 serves every row, with no
// wait. Its informers fill with a plain LIST (answered from the apiserver's watch cache),
// never a streaming watch-list, which takes this process about twice as long at 100,000
// rows (hack/bench/39-scale-out.sh).
func TestReadReplicaReadyServesEveryRowAndLists(t *testing.T) {
	g := NewWithT(t)
	env, cfg, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	admin, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	const rows = 300
	t.Log("two public boards holding 300 valid rows between them, before the replica starts")
	org := testenv.Namespace("org")
	g.Expect(admin.Create(ctx, org)).To(Succeed())
	g.Expect(admin.Create(ctx, &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: org.Name, Name: "ds"}})).To(Succeed())
	boards := []*hubv1alpha1.Leaderboard{
		board(ctx, g, admin, org.Name, "one", hubv1alpha1.VisibilityPublic),
		board(ctx, g, admin, org.Name, "two", hubv1alpha1.VisibilityPublic),
	}
	for i := range rows {
		validRow(ctx, g, admin, boards[i%2], i)
	}

	t.Log("a read replica whose requests to the apiserver are recorded")
	var mu sync.Mutex
	var requests []string
	readCfg := rest.CopyConfig(cfg)
	readCfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.URL.Path, "/leaderboardrows") {
				mu.Lock()
				requests = append(requests, r.URL.RawQuery)
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := operator.NewManager(readCfg, operator.Options{
		Role: operator.RoleRead, MetricsAddr: "0", ProbeAddr: "0", HTTPListener: ln, Restartable: true,
	})
	g.Expect(err).NotTo(HaveOccurred())
	readCtx, stopRead := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(readCtx) }()
	t.Cleanup(func() { stopRead(); g.Expect(<-done).To(Succeed()) })
	base := "http://" + ln.Addr().String()
	g.Eventually(func() int { return status(http.Get(base + "/readyz")) }).WithTimeout(time.Minute).WithPolling(5 * time.Millisecond).Should(Equal(http.StatusOK))

	t.Log("Ready: the first read of each board serves all its rows, ranked")
	for _, lb := range boards {
		code, body := postTo(g, base+"/v1/leaderboard-read", `{"package":"`+lb.Spec.Package+`","name":"`+lb.Spec.Name+`","page_size":1}`, "")
		g.Expect(code).To(Equal(http.StatusOK), body)
		g.Expect(body).To(ContainSubstring(`"total":150,`), "board %s right after /readyz said 200", lb.Name)
	}

	t.Log("the rows came with a LIST, not a streaming watch-list")
	mu.Lock()
	defer mu.Unlock()
	var lists int
	for _, q := range requests {
		g.Expect(q).NotTo(ContainSubstring("sendInitialEvents"), "a watch-list request: %s", q)
		if !strings.Contains(q, "watch=true") {
			lists++
		}
	}
	g.Expect(lists).To(BeNumerically(">=", 1), "no LIST of the rows among %q", requests)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// validRow creates a row of lb with score i and marks it Valid for its generation, as
// the row controller would (no controller runs in this test).
func validRow(ctx context.Context, g Gomega, c client.Client, lb *hubv1alpha1.Leaderboard, i int) {
	name := fmt.Sprintf("r%04d", i)
	row(ctx, g, c, lb, name, float64(i))
	r := &hubv1alpha1.LeaderboardRow{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: lb.Namespace, Name: name}, r)).To(Succeed())
	r.Status.Conditions = []metav1.Condition{{
		Type: hubv1alpha1.ConditionValid, Status: metav1.ConditionTrue, ObservedGeneration: r.Generation,
		Reason: hubv1alpha1.ReasonValuesValid, Message: "valid", LastTransitionTime: metav1.Now(),
	}}
	g.Expect(c.Status().Update(ctx, r)).To(Succeed())
}
