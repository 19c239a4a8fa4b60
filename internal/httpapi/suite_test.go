package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/testenv"
	"podium.dev/podium/internal/testenv/ginkgoenv"
)

var (
	suite     *testenv.Suite
	cfg       *rest.Config
	k8sClient client.Client
	ctx       context.Context
	// baseURL is the operator's HTTP API, served by the real manager on 127.0.0.1.
	baseURL string
)

func TestHTTPAPI(t *testing.T) { ginkgoenv.RunSpecs(t, "HTTP API Suite") }

var _ = BeforeSuite(func() {
	// Rows and boards reach the read through the controllers and informers: on a busy
	// 2-core machine that may take more than Gomega's default second.
	ginkgoenv.SetEventuallyDefaults(30*time.Second, 100*time.Millisecond)
	suite = ginkgoenv.StartSuite(testenv.SuiteOptions{Operator: true})
	ctx, cfg, k8sClient, baseURL = suite.Ctx, suite.Config, suite.Client, suite.Operator.BaseURL
})

var _ = AfterSuite(func() {
	ginkgoenv.AwaitOperatorStopped(suite)
})

// newOrg creates a fresh org namespace.
func newOrg() string {
	return ginkgoenv.CreateNamespace(ctx, k8sClient, "org").Name
}

// memberToken creates a ServiceAccount in ns bound to role there and returns a token.
func memberToken(ns, role string) string {
	return ginkgoenv.ServiceAccountToken(ctx, suite.Clientset, ns, "runner", role)
}

// newBoard creates a leaderboard "main" of dataset "ds" in ns, ranked by metrics.score desc.
func newBoard(ns string, vis hubv1alpha1.Visibility) *hubv1alpha1.Leaderboard {
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "main"},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package:    ns + "/ds",
			Name:       "main",
			Title:      "Main board",
			Visibility: vis,
			Columns: []hubv1alpha1.Column{{
				ID: "score", Header: "Score", Accessor: "metrics.score", Type: hubv1alpha1.ColumnNumber,
			}},
			RankBy: []hubv1alpha1.RankRule{{Accessor: "metrics.score", Direction: hubv1alpha1.Descending}},
		},
	}
	Expect(k8sClient.Create(ctx, lb)).To(Succeed())
	return lb
}

// newRow creates a row of board lb with metrics {"score": score}.
func newRow(lb *hubv1alpha1.Leaderboard, name string, score float64) *hubv1alpha1.LeaderboardRow {
	m, _ := json.Marshal(map[string]any{"score": score})
	row := &hubv1alpha1.LeaderboardRow{
		ObjectMeta: metav1.ObjectMeta{Namespace: lb.Namespace, Name: name},
		Spec: hubv1alpha1.LeaderboardRowSpec{
			Leaderboard: lb.Name,
			Metrics:     &apiextensionsv1.JSON{Raw: m},
		},
	}
	Expect(k8sClient.Create(ctx, row)).To(Succeed())
	return row
}

// response is a decoded HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) read() readBody {
	var b readBody
	ExpectWithOffset(1, json.Unmarshal(r.body, &b)).To(Succeed(), string(r.body))
	return b
}

func (r response) apiError() apiErr {
	var e struct {
		Error apiErr `json:"error"`
	}
	ExpectWithOffset(1, json.Unmarshal(r.body, &e)).To(Succeed(), string(r.body))
	return e.Error
}

type apiErr struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details []struct {
		Field string `json:"field"`
	} `json:"details"`
}

type readBody struct {
	Leaderboard map[string]any `json:"leaderboard"`
	Rows        []struct {
		ID            string         `json:"id"`
		LeaderboardID string         `json:"leaderboard_id"`
		Rank          int            `json:"rank"`
		Metrics       map[string]any `json:"metrics"`
		Status        string         `json:"status"`
		NTrials       int            `json:"n_trials"`
	} `json:"rows"`
	Pagination struct {
		Total      int `json:"total"`
		Page       int `json:"page"`
		PageSize   int `json:"page_size"`
		TotalPages int `json:"total_pages"`
	} `json:"pagination"`
}

// do sends one request to the operator's API.
func do(method, path string, body any, header map[string]string) response {
	req, err := testenv.NewAPIRequest(ctx, method, baseURL+path, body)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	for k, v := range header {
		req.Header.Set(k, v)
	}
	r, err := testenv.SendAPIRequest(nil, req)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return response{status: r.Status, header: r.Header, body: r.Body}
}

// read posts a leaderboard read; token "" is anonymous.
func read(body any, token string) response {
	h := map[string]string{}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return do(http.MethodPost, "/v1/leaderboard-read", body, h)
}

func slugRead(lb *hubv1alpha1.Leaderboard, page, size int) map[string]any {
	return map[string]any{"package": lb.Spec.Package, "name": lb.Spec.Name, "page": page, "page_size": size}
}
