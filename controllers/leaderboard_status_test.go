package controllers

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/health"
	"podium.dev/podium/internal/schema"
)

// testNow is the clock of the pure status functions.
var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func version(id, tag string, day int) hubv1alpha1.DatasetVersion {
	return hubv1alpha1.DatasetVersion{ID: id, Tag: tag, CreatedAt: metav1.NewTime(time.Date(2026, 1, 1+day, 0, 0, 0, 0, time.UTC))}
}

func TestResolveVersionIDs(t *testing.T) {
	versions := []hubv1alpha1.DatasetVersion{version("b", "1.1", 1), version("a", "1.0", 0), version("c", "2.0", 2)}
	refs := func(r ...string) *[]string { return &r }
	tests := []struct {
		name       string
		refs, ids  *[]string
		versions   []hubv1alpha1.DatasetVersion
		want       []string
		wantReason string
	}{
		{name: "rule 1: both omitted is every version, oldest first", versions: versions, want: []string{"a", "b", "c"}},
		{name: "rule 1 without versions", want: []string{}},
		{name: "rule 2: both empty is none", refs: refs(), ids: refs(), versions: versions, want: []string{}},
		{name: "refs only", refs: refs("2.0", "1.0"), versions: versions, want: []string{"c", "a"}},
		{name: "latest is the newest", refs: refs("latest"), versions: versions, want: []string{"c"}},
		{name: "refs then ids without duplicates", refs: refs("latest", "1.1"), ids: refs("C", "a"), versions: versions, want: []string{"c", "b", "a"}},
		{name: "ids only", ids: refs("b"), versions: versions, want: []string{"b"}},
		{name: "latest of no versions", refs: refs("latest"), wantReason: hubv1alpha1.ReasonVersionNotFound},
		{name: "unknown tag", refs: refs("9.9"), versions: versions, wantReason: hubv1alpha1.ReasonVersionNotFound},
		{name: "unknown id", ids: refs("z"), versions: versions, wantReason: hubv1alpha1.ReasonVersionNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, p := ResolveVersionIDs(tt.refs, tt.ids, tt.versions)
			reason := ""
			if p != nil {
				reason = p.reason
			}
			if diff := cmp.Diff(tt.wantReason, reason); diff != "" {
				t.Fatalf("reason (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUndeclaredAccessors(t *testing.T) {
	meta, _ := schema.Parse([]byte(`{"properties":{"agent":{"type":"string"}}}`))
	metrics, _ := schema.Parse([]byte(`{"type":"object"}`))
	lb := &hubv1alpha1.Leaderboard{Spec: hubv1alpha1.LeaderboardSpec{
		Columns: []hubv1alpha1.Column{
			{ID: "agent", Accessor: "metadata.agent", DisplayAccessor: "metadata.agent_url"},
			{ID: "model", Accessor: "metadata.model"},
			{ID: "reward", Accessor: "metrics.reward"},
		},
		RankBy: []hubv1alpha1.RankRule{
			{Accessor: "metrics.reward"}, {Accessor: "metadata.date"},
			{Accessor: "metadata.agent", IntervalLow: "metadata.lo", IntervalHigh: "metrics.hi"},
			{Accessor: "metadata.agent", Stderr: "metadata.se"},
		},
	}}
	got := undeclaredAccessors(lb, meta, metrics)
	want := []string{
		`columns[agent].displayAccessor "metadata.agent_url"`, `columns[model].accessor "metadata.model"`,
		`rankBy[1].accessor "metadata.date"`, `rankBy[2].intervalLow "metadata.lo"`, `rankBy[3].stderr "metadata.se"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBoardStatusReasons(t *testing.T) {
	ds := &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "ds", UID: "ds-uid"}, Spec: hubv1alpha1.DatasetSpec{
		Versions: []hubv1alpha1.DatasetVersion{version("a", "1.0", 0)}}}
	base := func() *hubv1alpha1.Leaderboard {
		return &hubv1alpha1.Leaderboard{
			ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "lb", UID: "lb-uid", Generation: 3, CreationTimestamp: metav1.NewTime(time.Unix(100, 0))},
			Spec:       hubv1alpha1.LeaderboardSpec{Package: "org/ds", Name: "main", Title: "Main"},
		}
	}
	older := *base()
	older.Name, older.UID, older.CreationTimestamp = "old", "old-uid", metav1.NewTime(time.Unix(50, 0))
	tests := []struct {
		name    string
		mutate  func(*hubv1alpha1.Leaderboard)
		facts   boardFacts
		reason  string
		message string
	}{
		{"ready", nil, boardFacts{dataset: ds, rows: 3, ranked: 2}, hubv1alpha1.ReasonReady, "leaderboard is ready with 1 dataset versions"},
		{"dataset missing", nil, boardFacts{}, hubv1alpha1.ReasonDatasetNotFound, `package: dataset "org/ds" does not exist`},
		{"dataset elsewhere", nil, boardFacts{datasetElsewhere: &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "ds"}}},
			hubv1alpha1.ReasonPackageInOtherOrg, `package: other/ds belongs to another organization: a leaderboard must live in its dataset's namespace "other"`},
		{"older namesake", nil, boardFacts{dataset: ds, sameName: []hubv1alpha1.Leaderboard{*base(), older}},
			hubv1alpha1.ReasonDuplicateName, `name: leaderboard "main" (object old) of package org/ds already has this name`},
		{"invalid schema first, then the rest", func(lb *hubv1alpha1.Leaderboard) {
			lb.Spec.MetricsSchema = &apiextensionsv1.JSON{Raw: []byte(`{"type":"string"}`)}
		}, boardFacts{}, hubv1alpha1.ReasonInvalidSchema,
			`metricsSchema.type: must be "object" (a row's values are an object), got string; package: dataset "org/ds" does not exist`},
		{"unknown version", func(lb *hubv1alpha1.Leaderboard) { lb.Spec.DatasetVersionRefs = &[]string{"2.0"} },
			boardFacts{dataset: ds}, hubv1alpha1.ReasonVersionNotFound, `no such dataset version: datasetVersionRefs[0] "2.0"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lb := base()
			if tt.mutate != nil {
				tt.mutate(lb)
			}
			st := boardStatus(lb, tt.facts, testNow)
			c := st.Conditions[0]
			if diff := cmp.Diff([]string{tt.reason, tt.message}, []string{c.Reason, c.Message}); diff != "" {
				t.Errorf("reason, message (-want +got):\n%s", diff)
			}
			if st.ObservedGeneration != 3 || c.ObservedGeneration != 3 {
				t.Errorf("observedGeneration = %d/%d, want 3", st.ObservedGeneration, c.ObservedGeneration)
			}
			if st.Rows != tt.facts.rows || st.RankedRows != tt.facts.ranked {
				t.Errorf("counts = %d/%d, want %d/%d", st.Rows, st.RankedRows, tt.facts.rows, tt.facts.ranked)
			}
		})
	}
}

func TestBoardStatusResolvesOnce(t *testing.T) {
	ds := &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "ds", UID: "ds-uid"}, Spec: hubv1alpha1.DatasetSpec{
		Versions: []hubv1alpha1.DatasetVersion{version("a", "1.0", 0)}}}
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "lb", UID: "lb-uid"},
		Spec:       hubv1alpha1.LeaderboardSpec{Package: "org/ds", Name: "main", Title: "Main"},
	}
	lb.Status = boardStatus(lb, boardFacts{dataset: ds}, testNow)
	ds.Spec.Versions = append(ds.Spec.Versions, version("b", "2.0", 1))
	if got := boardStatus(lb, boardFacts{dataset: ds}, testNow).DatasetVersionIDs; !cmp.Equal(got, []string{"a"}) {
		t.Errorf("a later version was added: %v", got)
	}
	lb.Spec.DatasetVersionRefs = &[]string{"latest"}
	if got := boardStatus(lb, boardFacts{dataset: ds}, testNow).DatasetVersionIDs; !cmp.Equal(got, []string{"b"}) {
		t.Errorf("changed refs were not resolved again: %v", got)
	}
	lb.Spec.DatasetVersionRefs = &[]string{"nope"}
	st := boardStatus(lb, boardFacts{dataset: ds}, testNow)
	if !cmp.Equal(st.DatasetVersionIDs, []string{"a"}) || st.ResolvedFrom != lb.Status.ResolvedFrom {
		t.Errorf("a failed resolution changed the stored one: %v from %s", st.DatasetVersionIDs, st.ResolvedFrom)
	}
}

func TestRowStatus(t *testing.T) {
	lb := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{Name: "lb", Generation: 4}, Spec: hubv1alpha1.LeaderboardSpec{
		MetricsSchema: &apiextensionsv1.JSON{Raw: []byte(`{"properties":{"reward":{"type":"number"}}}`)}}}
	many := `{`
	for i := range 150 {
		if i > 0 {
			many += ","
		}
		many += `"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1`
	}
	many += `}`
	strict := lb.DeepCopy()
	strict.Spec.MetadataSchema = &apiextensionsv1.JSON{Raw: []byte(`{"additionalProperties":false}`)}
	tests := []struct {
		name    string
		lb      *hubv1alpha1.Leaderboard
		metrics string
		meta    string
		reason  string
		fields  int
		schema  int64
	}{
		{"valid", lb, `{"reward":1}`, ``, hubv1alpha1.ReasonValuesValid, 0, 4},
		{"invalid", lb, `{"reward":"x"}`, ``, hubv1alpha1.ReasonValuesInvalid, 1, 4},
		{"no board", nil, `{"reward":1}`, ``, hubv1alpha1.ReasonLeaderboardNotFound, 0, 0},
		{"invalid fields are capped", strict, `{}`, many, hubv1alpha1.ReasonValuesInvalid, maxInvalidFields, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "r", Generation: 2}, Spec: hubv1alpha1.LeaderboardRowSpec{
				Leaderboard: "lb", Metrics: &apiextensionsv1.JSON{Raw: []byte(tt.metrics)}}}
			if tt.meta != "" {
				r.Spec.Metadata = &apiextensionsv1.JSON{Raw: []byte(tt.meta)}
			}
			st := rowStatus(r, tt.lb, testNow)
			c := st.Conditions[0]
			if c.Reason != tt.reason || len(st.InvalidFields) != tt.fields || st.SchemaGeneration != tt.schema || c.ObservedGeneration != 2 || st.ObservedGeneration != 2 {
				t.Errorf("got reason %s, %d invalid fields, schemaGeneration %d, observed %d/%d; want %s, %d, %d, 2",
					c.Reason, len(st.InvalidFields), st.SchemaGeneration, c.ObservedGeneration, st.ObservedGeneration, tt.reason, tt.fields, tt.schema)
			}
			if len(c.Message) > 4096 {
				t.Errorf("message of %d bytes", len(c.Message))
			}
		})
	}
}

func TestSpecChangedAt(t *testing.T) {
	created := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	earlier := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	later := testNow.Add(time.Hour) // a previous value ahead of this replica's clock
	at := func(t time.Time) *metav1.Time { return &metav1.Time{Time: t} }
	tests := []struct {
		name     string
		gen      int64
		observed int64
		prev     *metav1.Time
		want     *metav1.Time
	}{
		{"first status of generation 1: the creation", 1, 0, nil, at(created)},
		{"first status of a generation changed before the controller saw it: now", 3, 0, nil, at(testNow)},
		{"a new generation: now", 2, 1, at(created), at(testNow)},
		{"a new generation never goes back", 2, 1, at(later), at(later.Add(time.Second))},
		{"a new generation within the second of the previous one: a second later", 2, 1, at(testNow), at(testNow.Truncate(time.Second).Add(time.Second))},
		{"the same generation keeps it (labels, status, resyncs)", 2, 2, at(earlier), at(earlier)},
		{"the same generation observed before the field existed keeps none", 4, 4, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &metav1.ObjectMeta{Generation: tt.gen, CreationTimestamp: metav1.NewTime(created)}
			if diff := cmp.Diff(tt.want, specChangedAt(obj, tt.observed, tt.prev, testNow)); diff != "" {
				t.Errorf("specChangedAt (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a clock behind the creation", func(t *testing.T) {
		obj := &metav1.ObjectMeta{Generation: 2, CreationTimestamp: metav1.NewTime(testNow.Add(time.Minute))}
		want := metav1.NewTime(obj.CreationTimestamp.Add(time.Second))
		if got := specChangedAt(obj, 1, nil, testNow); !got.Equal(&want) {
			t.Errorf("specChangedAt = %v, want a second after the creation %v", got, obj.CreationTimestamp)
		}
	})
}

func TestStatusUpdatedAtFollowsGenerations(t *testing.T) {
	created := metav1.NewTime(testNow.Add(-time.Hour))
	lb := &hubv1alpha1.Leaderboard{ObjectMeta: metav1.ObjectMeta{Name: "lb", Generation: 1, CreationTimestamp: created},
		Spec: hubv1alpha1.LeaderboardSpec{MetricsSchema: &apiextensionsv1.JSON{Raw: []byte(`{"properties":{"reward":{"type":"number"}}}`)}}}
	r := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{Name: "r", Generation: 1, CreationTimestamp: created},
		Spec: hubv1alpha1.LeaderboardRowSpec{Leaderboard: "lb", Metrics: &apiextensionsv1.JSON{Raw: []byte(`{"reward":1}`)}}}

	lb.Status = boardStatus(lb, boardFacts{}, testNow)
	r.Status = rowStatus(r, lb, testNow)
	if !lb.Status.UpdatedAt.Equal(&created) || !r.Status.UpdatedAt.Equal(&created) {
		t.Fatalf("first status: updatedAt %v / %v, want the creation %v", lb.Status.UpdatedAt, r.Status.UpdatedAt, created)
	}
	later := testNow.Add(time.Minute)
	if st := boardStatus(lb, boardFacts{rows: 1}, later); !st.UpdatedAt.Equal(&created) {
		t.Errorf("a board resync moved updatedAt to %v", st.UpdatedAt)
	}
	if st := rowStatus(r, lb, later); !st.UpdatedAt.Equal(&created) {
		t.Errorf("a row resync moved updatedAt to %v", st.UpdatedAt)
	}
	lb.Generation, r.Generation = 2, 2
	if st := boardStatus(lb, boardFacts{}, later); !st.UpdatedAt.Time.Equal(later) {
		t.Errorf("a new board generation: updatedAt %v, want %v", st.UpdatedAt, later)
	}
	if st := rowStatus(r, lb, later); !st.UpdatedAt.Time.Equal(later) {
		t.Errorf("a new row generation: updatedAt %v, want %v", st.UpdatedAt, later)
	}
}

func TestTrialLinks(t *testing.T) {
	t1 := metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	t2 := metav1.NewTime(testNow)
	const a, b, c = "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002", "aaaaaaaa-0000-4000-8000-000000000003"
	group := func(at metav1.Time, ids ...string) hubv1alpha1.TrialLinkGroup {
		return hubv1alpha1.TrialLinkGroup{LinkedAt: at, TrialIDs: ids}
	}
	tests := []struct {
		name   string
		ids    []string
		prev   []hubv1alpha1.TrialLinkGroup
		specAt *metav1.Time
		want   []hubv1alpha1.TrialLinkGroup
	}{
		{"no trials", nil, nil, &t2, nil},
		{"the first trials, at the spec's time", []string{a, b}, nil, &t1, []hubv1alpha1.TrialLinkGroup{group(t1, a, b)}},
		{"kept trials keep their time, new ones get the new spec's", []string{a, b, c}, []hubv1alpha1.TrialLinkGroup{group(t1, a, b)}, &t2,
			[]hubv1alpha1.TrialLinkGroup{group(t1, a, b), group(t2, c)}},
		{"unlinked trials are dropped, and empty groups with them", []string{c}, []hubv1alpha1.TrialLinkGroup{group(t1, a, b), group(t2, c)}, &t2,
			[]hubv1alpha1.TrialLinkGroup{group(t2, c)}},
		{"an unknown spec time records nothing new", []string{a, c}, []hubv1alpha1.TrialLinkGroup{group(t1, a)}, nil,
			[]hubv1alpha1.TrialLinkGroup{group(t1, a)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, trialLinks(tt.ids, tt.prev, tt.specAt)); diff != "" {
				t.Errorf("trialLinks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFirstInvalidRowNames(t *testing.T) {
	var names []string
	for _, n := range []string{"r-7", "r-2", "r-9", "r-1", "r-5", "r-3", "r-8", "r-0"} {
		names = firstNames(names, n, 5)
	}
	if diff := cmp.Diff([]string{"r-0", "r-1", "r-2", "r-3", "r-5"}, names); diff != "" {
		t.Errorf("firstNames (-want +got):\n%s", diff)
	}
}

func TestReadyWarning(t *testing.T) {
	st := func(status metav1.ConditionStatus, reason string) hubv1alpha1.LeaderboardStatus {
		return hubv1alpha1.LeaderboardStatus{Conditions: []metav1.Condition{{
			Type: hubv1alpha1.ConditionReady, Status: status, Reason: reason, Message: reason + " message"}}}
	}
	ready := st(metav1.ConditionTrue, hubv1alpha1.ReasonReady)
	dup := st(metav1.ConditionFalse, hubv1alpha1.ReasonDuplicateName)
	schema := st(metav1.ConditionFalse, hubv1alpha1.ReasonInvalidSchema)
	missing := st(metav1.ConditionFalse, hubv1alpha1.ReasonDatasetNotFound)
	for name, tc := range map[string]struct {
		old, next  hubv1alpha1.LeaderboardStatus
		wantReason string
	}{
		"new board, duplicate name":   {hubv1alpha1.LeaderboardStatus{}, dup, hubv1alpha1.ReasonDuplicateName},
		"ready to invalid schema":     {ready, schema, hubv1alpha1.ReasonInvalidSchema},
		"duplicate to invalid schema": {dup, schema, hubv1alpha1.ReasonInvalidSchema},
		"still a duplicate":           {dup, dup, ""},
		"becomes ready":               {dup, ready, ""},
		"another reason":              {ready, missing, ""},
	} {
		reason, msg, ok := readyWarning(tc.old, tc.next)
		if ok != (tc.wantReason != "") || reason != tc.wantReason || (ok && msg != tc.wantReason+" message") {
			t.Errorf("%s: readyWarning = %q, %q, %v; want reason %q", name, reason, msg, ok, tc.wantReason)
		}
	}
}

func TestDatasetReady(t *testing.T) {
	ds := &hubv1alpha1.Dataset{Spec: hubv1alpha1.DatasetSpec{Versions: []hubv1alpha1.DatasetVersion{
		version("aaaaaaaa-0000-4000-8000-000000000001", "1.0", 0),
		version("bbbbbbbb-0000-4000-8000-000000000002", "2.0", 1),
	}}}
	if v, reason, _ := datasetReady(ds); v != health.Healthy || reason != hubv1alpha1.ReasonReady {
		t.Fatalf("distinct ids: %v %s", v, reason)
	}
	ds.Spec.Versions = append(ds.Spec.Versions, version("AAAAAAAA-0000-4000-8000-000000000001", "1.0-upper", 2))
	v, reason, msg := datasetReady(ds)
	if v != health.Stalled || reason != hubv1alpha1.ReasonDuplicateVersionID ||
		!strings.Contains(msg, `"aaaaaaaa-0000-4000-8000-000000000001" and "AAAAAAAA-0000-4000-8000-000000000001"`) {
		t.Fatalf("ids differing in case: %v %s %s", v, reason, msg)
	}
}
