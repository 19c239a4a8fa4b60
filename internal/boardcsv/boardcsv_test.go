package boardcsv

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/ranking"
)

func row(id, metadata, metrics string) *hubv1alpha1.LeaderboardRow {
	r := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{
		UID: types.UID(id), CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
	}}
	if metadata != "" {
		r.Spec.Metadata = &apiextensionsv1.JSON{Raw: []byte(metadata)}
	}
	if metrics != "" {
		r.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(metrics)}
	}
	return r
}

func TestWrite(t *testing.T) {
	lb := &hubv1alpha1.Leaderboard{Spec: hubv1alpha1.LeaderboardSpec{RankBy: []hubv1alpha1.RankRule{
		{Accessor: "metrics.acc", Direction: hubv1alpha1.Descending, Stderr: "metrics.se"},
	}}}
	rows := []ranking.Entry{
		{Rank: 1, RankUpper: 1, Interval: ranking.Interval{Low: 0.5, High: 1.5, OK: true},
			Row: row("a", `{"agent": "=HYPERLINK(\"http://x\")", "n": {"x": 1}}`, `{"acc": 1, "se": 0.25, "tags": ["-x"], "a.b": 5, "a": {"b": 6, "c": true}}`)},
		{Rank: 2, RankUpper: 1, Row: row("b", `{"agent": "plain, \"quoted\"\nline", "n": 2}`, `{"acc": -0.5, "neg": "-1", "nul": null, "obj": {}}`)},
	}
	var buf bytes.Buffer
	if err := Write(&buf, lb, rows); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(buf.Bytes(), []byte("\r\n")) {
		t.Errorf("records do not end with CRLF: %q", buf.String())
	}
	got, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("the output is not CSV: %v", err)
	}
	want := [][]string{
		{"rank", "rank_upper", "interval_low", "interval_high", "id", "created_at", "updated_at",
			"verified", "job_id", "image_digest", "ran_at",
			"metadata.agent", "metadata.n", "metadata.n.x",
			"metrics.a.b", "metrics.a.c", "metrics.acc", "metrics.neg", "metrics.nul", "metrics.se", "metrics.tags"},
		{"1", "1", "0.5", "1.5", "a", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z", "false", "", "", "",
			`'=HYPERLINK("http://x")`, `{"x":1}`, "1",
			"5", "true", "1", "", "", "0.25", `["-x"]`},
		{"2", "1", "", "", "b", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z", "false", "", "", "",
			"plain, \"quoted\"\nline", "2", "",
			"", "", "-0.5", "'-1", "", "", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CSV (-want +got):\n%s", diff)
	}
}

func TestWriteWithoutRanges(t *testing.T) {
	lb := &hubv1alpha1.Leaderboard{}
	verified := row("b", "", "")
	verified.Generation = 2
	ran := metav1.NewTime(time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC))
	verified.Status.Provenance = &hubv1alpha1.RowProvenance{PodName: "p", PodUID: "u", JobID: "j", RanAt: &ran,
		Images: []hubv1alpha1.ContainerImage{{Name: "eval", ImageID: "repo@sha256:abc"}}}
	verified.Status.Conditions = []metav1.Condition{{Type: hubv1alpha1.ConditionVerified, Status: metav1.ConditionTrue, ObservedGeneration: 2}}
	// A provenance recorded for an older generation does not verify the current values.
	stale := row("c", "", "")
	stale.Generation = 3
	stale.Status.Provenance = verified.Status.Provenance
	stale.Status.Conditions = []metav1.Condition{{Type: hubv1alpha1.ConditionVerified, Status: metav1.ConditionTrue, ObservedGeneration: 2}}
	var buf bytes.Buffer
	if err := Write(&buf, lb, []ranking.Entry{{Rank: 1, Row: row("a", "", "")}, {Rank: 2, Row: verified}, {Rank: 3, Row: stale}}); err != nil {
		t.Fatal(err)
	}
	want := "rank,id,created_at,updated_at,verified,job_id,image_digest,ran_at\r\n" +
		"1,a,2026-01-02T03:04:05Z,2026-01-02T03:04:05Z,false,,,\r\n" +
		"2,b,2026-01-02T03:04:05Z,2026-01-02T03:04:05Z,true,j,sha256:abc,2026-01-02T03:00:00Z\r\n" +
		"3,c,2026-01-02T03:04:05Z,2026-01-02T03:04:05Z,false,,,\r\n"
	if buf.String() != want {
		t.Errorf("CSV = %q, want %q", buf.String(), want)
	}
}

func TestGuard(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "a": "a", "=1+1": "'=1+1", "+1": "'+1", "-1": "'-1", "@SUM(A1)": "'@SUM(A1)",
		"\tx": "'\tx", "\rx": "'\rx", " =x": " =x", "'x": "'x",
	} {
		if got := Guard(in); got != want {
			t.Errorf("Guard(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriteTooManyLeaves: rows that hold more distinct keys than MaxLeafColumns make
// their root one JSON column rather than an unbounded CSV; the other root is flattened.
func TestWriteTooManyLeaves(t *testing.T) {
	lb := &hubv1alpha1.Leaderboard{}
	var rows []ranking.Entry
	for i := range MaxLeafColumns + 1 {
		rows = append(rows, ranking.Entry{Rank: i + 1, Row: row("r", `{"agent": "x"}`, fmt.Sprintf(`{"k%d": -%d}`, i, i))})
	}
	var buf bytes.Buffer
	if err := Write(&buf, lb, rows); err != nil {
		t.Fatal(err)
	}
	got, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"rank", "id", "created_at", "updated_at", "verified", "job_id", "image_digest", "ran_at", "metadata.agent", "metrics"}, got[0]); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x", `{"k7": -7}`}, got[8][8:]); diff != "" {
		t.Errorf("row 8 (-want +got):\n%s", diff)
	}
	if len(got) != MaxLeafColumns+2 {
		t.Errorf("%d records, want %d", len(got), MaxLeafColumns+2)
	}
}
