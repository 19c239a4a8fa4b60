package rowwrite_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowwrite"
)

// TestWrites checks what each write sends (method, path, headers, a body that names its
// kind) and what a create keeps of the answer.
func TestWrites(t *testing.T) {
	answer := `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"b-x1","namespace":"org","uid":"u-1","resourceVersion":"7","annotations":{"hub.podium.dev/created-by":"alice"}}}`
	for _, tc := range []struct {
		name, method, path, answer string
		status                     int
		write                      func(*rowwrite.Client, *hubv1alpha1.LeaderboardRow) error
		wantErr                    bool
		wantUID                    string
	}{
		{name: "create", method: http.MethodPost, path: "/apis/hub.podium.dev/v1alpha1/namespaces/org/leaderboardrows",
			answer: answer, status: http.StatusCreated, write: createFn, wantUID: "u-1"},
		{name: "create answered without a uid", method: http.MethodPost, path: "/apis/hub.podium.dev/v1alpha1/namespaces/org/leaderboardrows",
			answer: `{"metadata":{"name":"b-x1"}}`, status: http.StatusCreated, write: createFn, wantErr: true},
		{name: "create refused", method: http.MethodPost, path: "/apis/hub.podium.dev/v1alpha1/namespaces/org/leaderboardrows",
			answer: `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`, status: http.StatusForbidden,
			write: createFn, wantErr: true},
		{name: "status", method: http.MethodPut, path: "/apis/hub.podium.dev/v1alpha1/namespaces/org/leaderboardrows/b-x1/status",
			answer: answer, status: http.StatusOK, write: statusFn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != tc.method || r.URL.Path != tc.path {
					t.Errorf("%s %s, want %s %s", r.Method, r.URL.Path, tc.method, tc.path)
				}
				if got := r.Header.Get("Accept"); got != rowwrite.MetadataOnly {
					t.Errorf("Accept %q", got)
				}
				b, _ := io.ReadAll(r.Body)
				var sent hubv1alpha1.LeaderboardRow
				if err := json.Unmarshal(b, &sent); err != nil || sent.Kind != "LeaderboardRow" || sent.APIVersion != hubv1alpha1.GroupVersion.String() || sent.Spec.Leaderboard != "b" {
					t.Errorf("body %s (%v)", b, err)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.answer))
			}))
			defer srv.Close()
			c, err := rowwrite.New(&rest.Config{Host: srv.URL}, srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			row := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "b-x1", GenerateName: "b-"},
				Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "b"}}
			err = tc.write(c, row)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if tc.wantUID != "" && (string(row.UID) != tc.wantUID || row.ResourceVersion != "7" || row.Annotations["hub.podium.dev/created-by"] != "alice" || row.Spec.Leaderboard != "b") {
				t.Errorf("row after create: %+v", row)
			}
		})
	}
}

func createFn(c *rowwrite.Client, r *hubv1alpha1.LeaderboardRow) error {
	return c.Create(context.Background(), r)
}

func statusFn(c *rowwrite.Client, r *hubv1alpha1.LeaderboardRow) error {
	return c.UpdateStatus(context.Background(), r)
}
