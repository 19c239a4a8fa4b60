package hub

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/wire"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name, file, content string
		want                string // substring of the error
		field               string
	}{
		{"unknown top key", "a.yaml", "name: x\ntitle: X\nranking: []\n", "a.yaml:3: ranking: unknown key", "ranking"},
		{"unknown nested key", "a.yaml", "name: x\ntitle: X\nrank_by:\n  - accessor: metrics.a\n    direction: asc\n    nul: last\n", "a.yaml:6: rank_by[0].nul: unknown key", "rank_by[0].nul"},
		{"unknown key in json", "a.json", "{\n  \"name\": \"x\",\n  \"titel\": \"X\"\n}\n", "a.json:3: titel: unknown key", "titel"},
		{"wrong type", "a.yaml", "name: x\ntitle: [1]\n", "a.yaml:2: title: must be of type string", "title"},
		{"wrong nested type", "a.yaml", "name: x\ntitle: X\ncolumns:\n  - id: a\n    enable_sorting: maybe\n", "a.yaml:5: columns[0].enable_sorting: must be of type boolean", "columns[0].enable_sorting"},
		{"columns not a list", "a.yaml", "name: x\ntitle: X\ncolumns: {id: a}\n", "a.yaml:3: columns: must be a list", "columns"},
		{"bad extension", "a.txt", "name: x\n", "must end in .yaml, .yml or .json", ""},
		{"not yaml", "a.yaml", "name: [x\n", "not valid YAML or JSON", ""},
		{"empty", "a.yaml", "", "the file is empty", ""},
		{"duplicate key", "a.yaml", "name: x\nname: y\n", "already set", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadConfig(writeTemp(t, tt.file, tt.content))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
			if tt.field != "" {
				e := apierr.As(err)
				if diff := cmp.Diff([]apierr.FieldError{{Field: tt.field, Message: e.Details.([]apierr.FieldError)[0].Message}}, e.Details); diff != "" {
					t.Errorf("details (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestConfigRoundTrip(t *testing.T) {
	for _, f := range []Format{FormatYAML, FormatJSON} {
		t.Run(string(f), func(t *testing.T) {
			want := InitFile("org/ds", "my_board.v2", "My board")
			refs := []string{"latest"}
			want.DatasetVersionRefs = &refs
			data, err := Marshal(want, f)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := LoadConfig(writeTemp(t, "c."+string(f), string(data)))
			if err != nil {
				t.Fatal(err)
			}
			// Through the API type and back, as create then export do.
			spec := SpecFromFile(cfg.File)
			got := FileFromSpec(&spec)
			if diff := cmp.Diff(normalize(t, want), normalize(t, got)); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func normalize(t *testing.T, v any) map[string]any {
	t.Helper()
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestYAMLKeepsStringsStrings(t *testing.T) {
	f := RowFile{ID: "8b0d7f44-9c0e-4a8e-9d43-53a1e8f4a001", ExpectedUpdatedAt: "2026-11-21T23:40:00.000000003Z", Status: "display",
		Metadata: json.RawMessage(`{"agent":"yes","version":"1.10","n":"007"}`)}
	data, err := Marshal(f, FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadRow(writeTemp(t, "r.yaml", string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(normalize(t, f), normalize(t, got)); diff != "" {
		t.Errorf("(-want +got):\n%s\n%s", diff, data)
	}
}

func TestBoardObjectName(t *testing.T) {
	tests := []struct{ dataset, name, prefix string }{
		{"swe", "main", "main-"},
		{"swe", "swe_bench.v1", "swe-bench-v1-"},
		{"swe", "__", "board-"},
		{"swe", strings.Repeat("a", 100), strings.Repeat("a", 50) + "-"},
		{"swe", "a--b", "a-b-"},
	}
	for _, tt := range tests {
		got := BoardObjectName(tt.dataset, tt.name)
		if !strings.HasPrefix(got, tt.prefix) || len(got) != len(tt.prefix)+8 {
			t.Errorf("BoardObjectName(%q, %q) = %q, want prefix %q and an 8-digit hash", tt.dataset, tt.name, got, tt.prefix)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("%q is not a valid object name: %v", got, errs)
		}
		if again := BoardObjectName(tt.dataset, tt.name); again != got {
			t.Errorf("not stable: %q then %q", got, again)
		}
	}
	if BoardObjectName("a", "x_y") == BoardObjectName("a", "x.y") {
		t.Error("slugs that sanitize alike must get different names")
	}
	if BoardObjectName("a", "x") == BoardObjectName("b", "x") {
		t.Error("the same slug in two datasets must get different names")
	}
}

func TestUpdatedAtIsTheReadsValue(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	lb := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created, Generation: 1}}
	lb.Status.ObservedGeneration = 1
	row := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created, Generation: 3}}
	row.Status.UpdatedAt = &metav1.Time{Time: created.Add(90 * time.Second)}
	row.Status.ObservedGeneration = 3
	tests := []struct {
		name string
		obj  client.Object
		want string
	}{
		{"a board never changed: its creation", lb, "2026-11-01T10:00:00Z"},
		{"a row changed by anyone: the controller's change time", row, "2026-11-01T10:01:30Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, UpdatedAt(tt.obj)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			m, changed, _ := changeTimes(tt.obj)
			if diff := cmp.Diff(wire.Timestamp(wire.ServedUpdatedAt(m, changed)), UpdatedAt(tt.obj)); diff != "" {
				t.Errorf("not what the read serves (-read +cli):\n%s", diff)
			}
		})
	}
	touch(lb, time.Date(2026, 11, 2, 8, 30, 15, 999, time.UTC))
	if diff := cmp.Diff("2026-11-02T08:30:15Z", UpdatedAt(lb)); diff != "" {
		t.Errorf("a CLI change (-want +got):\n%s", diff)
	}
}

func TestCheckToken(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	lb := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: created, Generation: 2}}
	lb.Status.UpdatedAt = &metav1.Time{Time: created.Add(time.Minute)}
	lb.Status.ObservedGeneration = 2
	tests := []struct {
		name, token string
		stale       bool
	}{
		{"no token: not checked", "", false},
		{"the served value", "2026-11-01T10:01:00Z", false},
		{"the same instant written with an offset (Python's isoformat)", "2026-11-01T10:01:00+00:00", false},
		{"the value before the change", "2026-11-01T10:00:00Z", true},
		{"a token of the older CLI (generation as nanoseconds)", "2026-11-01T10:01:00.000000002Z", true},
		{"not a time", "yesterday", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckToken("leaderboard o/d/n", tt.token, lb)
			if !tt.stale {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e := apierr.As(err)
			if e.Code != apierr.CodeStale {
				t.Fatalf("got %v, want a stale refusal", err)
			}
			want := map[string]string{"resource": "leaderboard o/d/n", "expected_updated_at": tt.token, "actual_updated_at": "2026-11-01T10:01:00Z"}
			if diff := cmp.Diff(want, e.Details.(map[string]string)); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSnakePath(t *testing.T) {
	for in, want := range map[string]string{
		"spec.rankBy[0].direction":    "rank_by[0].direction",
		"spec.datasetVersionIDs[1]":   "dataset_version_ids[1]",
		"spec.packageID":              "package_id",
		"spec.columns[2].displayType": "columns[2].display_type",
		"spec.title":                  "title",
		"spec.trialIDs[0]":            "trial_ids[0]",
	} {
		if got := SnakePath(in); got != want {
			t.Errorf("SnakePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSpecDiff(t *testing.T) {
	desc := "d"
	a := hubv1alpha1.LeaderboardSpec{Package: "o/d", Name: "n", Title: "T", Visibility: "",
		MetricsSchema: &apiextensionsv1.JSON{Raw: []byte(`{"type":"object","properties":{"r":{"type":"number"}}}`)}}
	b := *a.DeepCopy()
	b.Visibility = hubv1alpha1.VisibilityPrivate
	b.MetricsSchema = &apiextensionsv1.JSON{Raw: []byte(`{"properties": {"r": {"type": "number"}}, "type": "object"}`)}
	if d := specDiff(&a, &b); len(d) != 0 {
		t.Errorf("equal specs (default visibility, key order) differ: %+v", d)
	}
	b.Title, b.Description = "U", &desc
	var fields []string
	for _, d := range specDiff(&a, &b) {
		fields = append(fields, d.Field)
	}
	if diff := cmp.Diff([]string{"title", "description"}, fields); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMergeRowAndRowDiff(t *testing.T) {
	cur := hubv1alpha1.LeaderboardRowSpec{Leaderboard: "b", Metadata: &apiextensionsv1.JSON{Raw: []byte(`{"agent":"a"}`)},
		Metrics: &apiextensionsv1.JSON{Raw: []byte(`{"r":1}`)}, TrialIDs: []string{"x"}}
	next := mergeRow(&cur, &RowFile{Metrics: json.RawMessage(`{"r":2}`), Status: "hide"})
	if diff := cmp.Diff([]string{"metrics", "status"}, rowDiff(&cur, &next)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if string(next.Metadata.Raw) != `{"agent":"a"}` || len(next.TrialIDs) != 1 {
		t.Errorf("omitted fields were not kept: %+v", next)
	}
	empty := []string{}
	cleared := mergeRow(&cur, &RowFile{TrialIDs: &empty})
	if diff := cmp.Diff([]string{"trial_ids"}, rowDiff(&cur, &cleared)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestValidateRows(t *testing.T) {
	c := &Client{ValidateFn: DefaultValidator}
	board := &hubv1alpha1.LeaderboardSpec{MetricsSchema: &apiextensionsv1.JSON{Raw: []byte(`{"type":"object","properties":{"reward":{"type":"number"}}}`)}}
	row := func(metrics string, trials ...string) hubv1alpha1.LeaderboardRowSpec {
		return hubv1alpha1.LeaderboardRowSpec{Metrics: &apiextensionsv1.JSON{Raw: []byte(metrics)}, TrialIDs: trials}
	}
	const t1 = "8b0d7f44-9c0e-4a8e-9d43-53a1e8f4a001"
	in := []RowInput{
		{Index: 0, Spec: row(`{"reward":1}`, t1)},
		{Index: 1, Spec: row(`{"reward":"x"}`)},
		{Index: 2, Spec: row(`{"reward":2}`, t1)},
		{Index: 3, Spec: row(`{"reward":3}`, "nope")},
		{Index: 4, Spec: hubv1alpha1.LeaderboardRowSpec{Visibility: "maybe"}},
	}
	err := c.ValidateRows(board, in)
	e := apierr.As(err)
	if e.Code != apierr.CodeRowsInvalid {
		t.Fatalf("code = %s (%v)", e.Code, err)
	}
	var got []string
	for _, r := range e.Details.(RowsInvalid).InvalidRows {
		got = append(got, r.Fields[0].Field)
	}
	if diff := cmp.Diff([]string{"metrics.reward", "trial_ids[0]", "trial_ids[0]", "status"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := c.ValidateRows(board, in[:1]); err != nil {
		t.Errorf("a valid row is refused: %v", err)
	}
}

func TestOutputFormat(t *testing.T) {
	tests := []struct {
		path, format string
		kind, file   Format
		ok           bool
	}{
		{"a.yaml", "", FormatYAML, FormatYAML, true},
		{"a.YML", "", FormatYAML, FormatYAML, true},
		{"a.json", "", FormatJSON, FormatJSON, true},
		{"a.json", "manifest", FormatManifest, FormatJSON, true},
		{"a.yaml", "json", "", "", false},
		{"a.txt", "", "", "", false},
		{"a", "manifest", "", "", false},
		{"a.yaml", "xml", "", "", false},
	}
	for _, tt := range tests {
		kind, file, err := OutputFormat(tt.path, tt.format)
		if (err == nil) != tt.ok || kind != tt.kind || file != tt.file {
			t.Errorf("OutputFormat(%q, %q) = %q, %q, %v", tt.path, tt.format, kind, file, err)
		}
	}
}

func TestParallelStopsStartingAfterAFailure(t *testing.T) {
	ran := make([]bool, 100)
	errs := parallel(t.Context(), 1, 100, func(_ context.Context, i int) error {
		ran[i] = true
		if i == 3 {
			return apierr.Internal()
		}
		return nil
	})
	if errs[3] == nil || ran[50] {
		t.Errorf("errs[3] = %v, ran[50] = %v", errs[3], ran[50])
	}
}

func TestYAMLIsReadAlikeByYAML11Readers(t *testing.T) {
	v := map[string]any{"a": "yes", "b": "n", "c": "on", "d": "1_000", "e": "12:30", "f": "~", "g": "plain", "yes": 1, "h": "1.10"}
	data, err := Marshal(v, FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := sigsyaml.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": "yes", "b": "n", "c": "on", "d": "1_000", "e": "12:30", "f": "~", "g": "plain", "yes": float64(1), "h": "1.10"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s\n%s", diff, data)
	}
}

func TestAliasBombIsRefused(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	_, err := parseDocuments("bomb.yaml", []byte(bomb))
	if err == nil || !strings.Contains(err.Error(), "expands to more than") {
		t.Fatalf("error = %v", err)
	}
}

// Harbor's `row export --all` writes LeaderboardRowsExport: the board's id and
// updated_at, then each row's id, updated_at, metadata, metrics and status (PyYAML
// block style, timestamps quoted; or json.dumps with indent 2). update --rows takes it
// as it is, its top-level token too; a null token (Harbor's None) is no token.
func TestLoadRowsTakesHarborsRowsExport(t *testing.T) {
	const board, row = "0b6f1f4e-8d5a-4c1b-9e3f-2a7d6c5b4a39", "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	files := map[string]string{
		"harbor.yaml": "leaderboard_id: " + board + "\nexpected_updated_at: '2026-11-26T12:00:00Z'\nrows:\n" +
			"- id: " + row + "\n  expected_updated_at: '2026-11-26T12:00:01+00:00'\n  metadata:\n    agent: a\n  metrics:\n    reward: 1.0\n  status: display\n",
		"harbor.json": `{
  "leaderboard_id": "` + board + `",
  "expected_updated_at": "2026-11-26T12:00:00Z",
  "rows": [
    {
      "id": "` + row + `",
      "expected_updated_at": "2026-11-26T12:00:01+00:00",
      "metadata": {
        "agent": "a"
      },
      "metrics": {
        "reward": 1.0
      },
      "status": "display"
    }
  ]
}
`,
	}
	for name, content := range files {
		t.Run(name, func(t *testing.T) {
			f, err := LoadRows(writeTemp(t, name, content))
			if err != nil {
				t.Fatal(err)
			}
			if f.LeaderboardID != board || f.ExpectedUpdatedAt != "2026-11-26T12:00:00Z" || len(f.Rows) != 1 {
				t.Fatalf("got %+v", f)
			}
			r := f.Rows[0]
			if r.ID != row || r.ExpectedUpdatedAt != "2026-11-26T12:00:01+00:00" || r.Status != "display" || string(r.Metrics) != `{"reward":1.0}` && string(r.Metrics) != `{"reward":1}` {
				t.Errorf("row %+v (metrics %s)", r, r.Metrics)
			}
		})
	}
	t.Run("a null token", func(t *testing.T) {
		f, err := LoadRows(writeTemp(t, "null.yaml", "leaderboard_id: "+board+"\nexpected_updated_at: null\nrows:\n- id: "+row+"\n  expected_updated_at: null\n  metadata: {}\n  metrics: {}\n  status: hide\n"))
		if err != nil {
			t.Fatal(err)
		}
		if f.ExpectedUpdatedAt != "" || f.Rows[0].ExpectedUpdatedAt != "" {
			t.Errorf("got tokens %q and %q, want none", f.ExpectedUpdatedAt, f.Rows[0].ExpectedUpdatedAt)
		}
	})
}
