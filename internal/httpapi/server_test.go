package httpapi_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/httpapi"
)

// startServer runs a standalone server with opts on 127.0.0.1 until the test ends.
func startServer(opts httpapi.Options, routes map[string]http.Handler) string {
	GinkgoHelper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	opts.Listener = ln
	opts.Log = logf.FromContext(ctx).WithName("test-server")
	srv := httpapi.New(opts)
	for p, h := range routes {
		srv.Handle(p, h)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Start(sctx) }()
	DeferCleanup(func() {
		stop()
		Eventually(done).WithTimeout(15 * time.Second).Should(Receive(BeNil()))
	})
	addr, err := srv.Addr(ctx)
	Expect(err).NotTo(HaveOccurred())
	return addr.String()
}

var _ = Describe("The server", func() {
	It("answers unknown routes and wrong methods in the error envelope", func() {
		r := do(http.MethodGet, "/nope", nil, nil)
		Expect(r.status).To(Equal(http.StatusNotFound))
		Expect(r.header.Get("Content-Type")).To(Equal("application/json"))
		Expect(r.apiError().Code).To(Equal("not_found"))

		r = do(http.MethodGet, "/v1/leaderboard-read", nil, nil)
		Expect(r.status).To(Equal(http.StatusMethodNotAllowed))
		Expect(r.apiError().Code).To(Equal("method_not_allowed"))
		Expect(r.header.Get("Allow")).To(ContainSubstring("POST"))

		// A bad token is refused on every route, known or not.
		r = do(http.MethodGet, "/nope", nil, map[string]string{"Authorization": "Bearer nope"})
		Expect(r.status).To(Equal(http.StatusUnauthorized))
		Expect(r.apiError().Code).To(Equal("unauthenticated"))
	})

	It("serves /healthz and /readyz", func() {
		Expect(do(http.MethodGet, "/healthz", nil, nil).status).To(Equal(http.StatusOK))
		Expect(do(http.MethodGet, "/readyz", nil, nil).status).To(Equal(http.StatusOK))

		never := make(chan struct{})
		addr := startServer(httpapi.Options{
			WaitForSync: func(ctx context.Context) bool {
				select {
				case <-never:
				case <-ctx.Done():
				}
				return false
			},
		}, nil)
		resp, err := http.Get("http://" + addr + "/readyz")
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusServiceUnavailable))
		resp, err = http.Get("http://" + addr + "/healthz")
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
	})

	It("counts requests by route and code on the manager's metrics registry", func() {
		do(http.MethodGet, "/healthz", nil, nil)
		do(http.MethodGet, "/no-such-route", nil, nil)
		families, err := metrics.Registry.Gather()
		Expect(err).NotTo(HaveOccurred())
		seen := map[string]bool{}
		for _, f := range families {
			if f.GetName() != "podium_http_requests_total" {
				continue
			}
			for _, m := range f.GetMetric() {
				seen[labels(m)] = true
			}
		}
		Expect(seen).To(HaveKey("route=GET /healthz,code=200"))
		Expect(seen).To(HaveKey("route=unmatched,code=404"))
	})

	It("turns a panic into 500 internal, telling nothing of the cause", func() {
		addr := startServer(httpapi.Options{}, map[string]http.Handler{
			"GET /boom": http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("secret detail") }),
		})
		resp, err := http.Get("http://" + addr + "/boom")
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		Expect(resp.StatusCode).To(Equal(http.StatusInternalServerError))
		Expect(string(body)).To(ContainSubstring(`"code":"internal"`))
		Expect(string(body)).NotTo(ContainSubstring("secret detail"))
	})

	It("puts the caller in the request context: anonymous without a header", func() {
		var got *authn.Caller
		addr := startServer(httpapi.Options{}, map[string]http.Handler{
			"GET /who": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = authn.CallerFrom(r.Context()) }),
		})
		resp, err := http.Get("http://" + addr + "/who")
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(got).NotTo(BeNil())
		Expect(got.Anonymous).To(BeTrue())

		// Without a reviewer no token can be checked: any Authorization header is a 401.
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/who", nil)
		req.Header.Set("Authorization", "Bearer x")
		resp, err = http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
	})

	It("cuts off a client that never finishes its headers", func() {
		addr := startServer(httpapi.Options{ReadHeaderTimeout: 300 * time.Millisecond}, nil)
		conn, err := net.Dial("tcp", addr)
		Expect(err).NotTo(HaveOccurred())
		defer conn.Close()
		_, err = io.WriteString(conn, "POST /v1/leaderboard-read HTTP/1.1\r\nHost: podium\r\nContent-Type: appl")
		Expect(err).NotTo(HaveOccurred())
		// Our own deadline only keeps a broken server from hanging the test; the
		// server must close the connection long before it.
		Expect(conn.SetReadDeadline(time.Now().Add(20 * time.Second))).To(Succeed())
		rest, err := io.ReadAll(bufio.NewReader(conn))
		var ne net.Error
		Expect(errors.As(err, &ne) && ne.Timeout()).To(BeFalse(), "the server kept the connection open")
		Expect(strings.HasPrefix(string(rest), "HTTP/1.1 200")).To(BeFalse())
	})

	It("lets a request in flight finish when it shuts down", func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		entered, release := make(chan struct{}), make(chan struct{})
		srv := httpapi.New(httpapi.Options{Listener: ln, Log: logf.FromContext(ctx)})
		srv.Handle("GET /slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			<-release
			_, _ = io.WriteString(w, "done")
		}))
		sctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- srv.Start(sctx) }()

		got := make(chan string, 1)
		go func() {
			defer GinkgoRecover()
			resp, err := http.Get("http://" + ln.Addr().String() + "/slow")
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			got <- string(b)
		}()
		Eventually(entered).Should(BeClosed())
		stop()
		Consistently(done).WithTimeout(200 * time.Millisecond).ShouldNot(Receive())
		close(release)
		Eventually(got).WithTimeout(10 * time.Second).Should(Receive(Equal("done")))
		Eventually(done).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
	})
})

func labels(m *dto.Metric) string {
	var parts []string
	for _, name := range []string{"route", "code"} {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				parts = append(parts, name+"="+l.GetValue())
			}
		}
	}
	return strings.Join(parts, ",")
}
