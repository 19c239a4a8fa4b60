package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/operator"
	"podium.dev/podium/internal/origin"
	"podium.dev/podium/internal/testenv"
)

// The read tier (--role=read) against the real apiserver, as its ServiceAccount and
// nothing more: config/read's RBAC applied, a token of podium-read only. It serves a
// public board to anyone, a private one to an org member (a Kubernetes token, an API key
// and its exchanged access token, the keys looked up at the operator), and preflight;
// its cache holds no Secret and its client may not get one (403 from the apiserver).
func TestReadRoleServesWithoutSecretRights(t *testing.T) {
	g := NewWithT(t)
	suite, err := testenv.StartSuite(context.Background(), testenv.SuiteOptions{Operator: true})
	t.Cleanup(func() { _ = suite.Stop() })
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cfg, admin, cs, op := suite.Ctx, suite.Config, suite.Client, suite.Clientset, suite.Operator

	t.Log("installing config/read's ServiceAccount, ClusterRole and binding as shipped")
	applyFile(ctx, t, admin, filepath.Join(testenv.RepoRoot(), "config", "read", "rbac.yaml"))
	tr, err := cs.CoreV1().ServiceAccounts(testenv.DeliveryNamespace).CreateToken(ctx, "podium-read", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	readCfg := testenv.TokenConfig(cfg, tr.Status.Token)

	t.Log("the read tier's client may not get a Secret: the apiserver says 403")
	readClient, err := testenv.ClientAs(cfg, tr.Status.Token)
	g.Expect(err).NotTo(HaveOccurred())
	err = readClient.Get(ctx, client.ObjectKey{Namespace: testenv.DeliveryNamespace, Name: testenv.FingerprintKeySecret}, &corev1.Secret{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "get secret as podium-read: %v", err)
	err = readClient.List(ctx, &corev1.SecretList{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "list secrets as podium-read: %v", err)

	t.Log("an org with a public and a private board, and a member")
	org := testenv.Namespace("org")
	g.Expect(admin.Create(ctx, org)).To(Succeed())
	g.Expect(admin.Create(ctx, &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: org.Name, Name: "ds"}})).To(Succeed())
	public := board(ctx, g, admin, org.Name, "open", hubv1alpha1.VisibilityPublic)
	private := board(ctx, g, admin, org.Name, "closed", hubv1alpha1.VisibilityPrivate)
	row(ctx, g, admin, public, "r1", 1)
	row(ctx, g, admin, private, "r2", 2)
	member, err := testenv.ServiceAccountToken(ctx, cs, org.Name, "runner", "podium-org-member")
	g.Expect(err).NotTo(HaveOccurred())

	t.Log("starting the read role with podium-read's token only")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := operator.NewManager(readCfg, operator.Options{
		Role: operator.RoleRead, MetricsAddr: "0", ProbeAddr: "0", HTTPListener: ln, Restartable: true,
		OperatorURL: op.BaseURL,
	})
	g.Expect(err).NotTo(HaveOccurred())
	readCtx, stopRead := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(readCtx) }()
	t.Cleanup(func() { stopRead(); g.Expect(<-done).To(Succeed()) })
	base := "http://" + ln.Addr().String()
	g.Eventually(func() int { return status(http.Get(base + "/readyz")) }).WithTimeout(time.Minute).Should(Equal(http.StatusOK))

	readBody := func(lb *hubv1alpha1.Leaderboard) string {
		return `{"package":"` + lb.Spec.Package + `","name":"` + lb.Spec.Name + `"}`
	}
	post := func(path, body, token string) (int, string) { return postTo(g, base+path, body, token) }
	// rowsOf reads a board: "<status> <rows>".
	rowsOf := func(lb *hubv1alpha1.Leaderboard, token string) func() string {
		return func() string {
			code, body := post("/v1/leaderboard-read", readBody(lb), token)
			var r struct{ Rows []json.RawMessage }
			_ = json.Unmarshal([]byte(body), &r)
			return fmt.Sprintf("%d %d", code, len(r.Rows))
		}
	}

	t.Log("a public board to anyone, the same at /functions/v1/ and by GET")
	g.Eventually(rowsOf(public, "")).WithTimeout(time.Minute).Should(Equal("200 1"))
	code, _ := post("/functions/v1/leaderboard-read", readBody(public), "")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(status(http.Get(base + "/leaderboards"))).To(Equal(http.StatusOK))

	t.Log("a private board: 404 to the anonymous, its rows to a member's Kubernetes token")
	g.Expect(rowsOf(private, "")()).To(Equal("404 0"))
	g.Eventually(rowsOf(private, member)).WithTimeout(time.Minute).Should(Equal("200 1"))

	t.Log("an API key and its access token, made at the operator, sign in at the read tier")
	keyID, key := apiKey(g, op.BaseURL, member)
	g.Eventually(rowsOf(private, key)).Should(Equal("200 1"))
	g.Expect(rowsOf(private, "pdm_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")()).To(Equal("401 0"))
	code, body := postTo(g, op.BaseURL+"/internal/v1/authenticate", `{"token":"`+key+`"}`, member)
	g.Expect(code).To(Equal(http.StatusForbidden), "the operator's lookup answered a member: %s", body)
	code, body = postTo(g, op.BaseURL+"/internal/v1/authenticate", `{"token":"`+key+`"}`, tr.Status.Token)
	g.Expect(code).To(Equal(http.StatusOK), body)
	g.Expect(body).To(ContainSubstring(`"user":"system:serviceaccount:` + org.Name + `:runner"`))
	g.Expect(body).NotTo(ContainSubstring(key[len("pdm_0000000000000000_"):]), "the lookup answered the key")
	access := exchange(g, op.BaseURL, key)
	g.Expect(rowsOf(private, access)()).To(Equal("200 1"))

	t.Log("one origin (internal/origin, as make dev and the chart's Ingress route): Harbor's session through one base URL")
	opURL, err := url.Parse(op.BaseURL)
	g.Expect(err).NotTo(HaveOccurred())
	readURL, err := url.Parse(base)
	g.Expect(err).NotTo(HaveOccurred())
	one := httptest.NewServer(origin.NewRouter(opURL, readURL))
	t.Cleanup(one.Close)
	code, body = postTo(g, one.URL+"/functions/v1/api-key-exchange", `{"api_key":"`+key+`"}`, "")
	g.Expect(code).To(Equal(http.StatusOK), body)
	code, body = postTo(g, one.URL+"/functions/v1/secrets", `{"env_var":"OPENAI_API_KEY","value":"sk-one-origin-0001"}`, access)
	g.Expect(code).To(Equal(http.StatusCreated), body)
	code, body = postTo(g, one.URL+"/functions/v1/secrets/preflight", `{"organization":"`+org.Name+`","config":{}}`, access)
	g.Expect(code).To(Equal(http.StatusOK), body)
	code, body = postTo(g, one.URL+"/functions/v1/leaderboard-read", readBody(private), access)
	g.Expect(code).To(Equal(http.StatusOK), body)
	g.Expect(body).To(ContainSubstring(`"score":2`))
	code, _ = postTo(g, one.URL+"/internal/v1/authenticate", `{"token":"`+key+`"}`, tr.Status.Token)
	g.Expect(code).To(Equal(http.StatusNotFound), "the key lookup is no public path")

	t.Log("revoked at the operator, the key and its access token stop reading at the read tier within seconds")
	req, err := http.NewRequest(http.MethodDelete, op.BaseURL+"/v1/api-keys", strings.NewReader(`{"id":"`+keyID+`"}`))
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "Bearer "+member)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	g.Eventually(rowsOf(private, key)).WithTimeout(10 * time.Second).Should(Equal("401 0"))
	g.Eventually(rowsOf(private, access)).WithTimeout(10 * time.Second).Should(Equal("401 0"))

	t.Log("preflight: a member's stored key makes the run ready, from HostedSecret objects")
	code, body = postTo(g, op.BaseURL+"/v1/secrets", `{"env_var":"ANTHROPIC_API_KEY","value":"sk-ant-read-tier-0001"}`, member)
	g.Expect(code).To(Equal(http.StatusCreated), body)
	pre := `{"organization":"` + org.Name + `","config":{"agents":[{"name":"a","model_name":"anthropic/claude-opus-4","secrets":["ANTHROPIC_API_KEY"]}]}}`
	g.Eventually(func() string {
		code, body := post("/v1/secrets/preflight", pre, member)
		if code != http.StatusOK {
			return body
		}
		var r struct{ OK bool }
		_ = json.Unmarshal([]byte(body), &r)
		if !r.OK {
			return body
		}
		return "ok"
	}).WithTimeout(time.Minute).Should(Equal("ok"))
	code, body = post("/v1/secrets/preflight", pre, "")
	g.Expect(code).To(Equal(http.StatusUnauthorized), body)
	g.Expect(body).NotTo(ContainSubstring("sk-ant-read-tier-0001"))

	t.Log("the read tier serves no secrets API, and its cache holds no Secret informer")
	code, _ = post("/v1/secrets", `{"env_var":"X","value":"y"}`, member)
	g.Expect(code).To(Equal(http.StatusNotFound))
	err = mgr.GetCache().Get(ctx, client.ObjectKey{Namespace: testenv.DeliveryNamespace, Name: testenv.FingerprintKeySecret}, &corev1.Secret{})
	var notCached *cache.ErrResourceNotCached
	g.Expect(errors.As(err, &notCached)).To(BeTrue(), "a cached Secret read in the read tier: %v", err)
}

func status(resp *http.Response, err error) int {
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func postTo(g Gomega, url, body, token string) (int, string) {
	code, b, err := testenv.CallAPI(context.Background(), nil, http.MethodPost, url, token, body)
	g.Expect(err).NotTo(HaveOccurred())
	return code, string(b)
}

func apiKey(g Gomega, base, token string) (id, key string) {
	code, body := postTo(g, base+"/v1/api-keys", `{"name":"read-tier"}`, token)
	g.Expect(code).To(Equal(http.StatusCreated), body)
	var k struct{ ID, Key string }
	g.Expect(json.Unmarshal([]byte(body), &k)).To(Succeed())
	return k.ID, k.Key
}

func exchange(g Gomega, base, key string) string {
	code, body := postTo(g, base+"/v1/api-key-exchange", `{"api_key":"`+key+`"}`, "")
	g.Expect(code).To(Equal(http.StatusOK), body)
	var a struct {
		AccessToken string `json:"access_token"`
	}
	g.Expect(json.Unmarshal([]byte(body), &a)).To(Succeed())
	return a.AccessToken
}

func board(ctx context.Context, g Gomega, c client.Client, ns, name string, vis hubv1alpha1.Visibility) *hubv1alpha1.Leaderboard {
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package: ns + "/ds", Name: name, Title: name, Visibility: vis,
			Columns: []hubv1alpha1.Column{{ID: "score", Header: "Score", Accessor: "metrics.score", Type: hubv1alpha1.ColumnNumber}},
			RankBy:  []hubv1alpha1.RankRule{{Accessor: "metrics.score", Direction: hubv1alpha1.Descending}},
		},
	}
	g.Expect(c.Create(ctx, lb)).To(Succeed())
	return lb
}

func row(ctx context.Context, g Gomega, c client.Client, lb *hubv1alpha1.Leaderboard, name string, score float64) {
	m, _ := json.Marshal(map[string]any{"score": score})
	g.Expect(c.Create(ctx, &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Namespace: lb.Namespace, Name: name},
		Spec:       hubv1alpha1.LeaderboardRowSpec{Leaderboard: lb.Name, Metrics: &apiextensionsv1.JSON{Raw: m}},
	})).To(Succeed())
}

// applyFile creates every object of a multi-document YAML file.
func applyFile(ctx context.Context, t *testing.T, c client.Client, path string) {
	t.Helper()
	if err := testenv.ApplyFile(ctx, c, path); err != nil {
		t.Fatal(err)
	}
}
