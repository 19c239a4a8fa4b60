package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/wire"
)

// touch stamps the CLI's change time on an object about to be written.
func touch(obj metav1.Object, now time.Time) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[hubv1alpha1.AnnotationUpdatedAt] = now.UTC().Format(time.RFC3339)
	obj.SetAnnotations(a)
}

// BoardObjectName derives a valid, stable object name for a board: its slug name made
// DNS-safe ("_" and "." become "-"), cut to 50 characters, plus a short hash of
// "<dataset>/<name>" so that two slugs that sanitize alike never collide.
func BoardObjectName(dataset, name string) string {
	sum := sha256.Sum256([]byte(dataset + "/" + name))
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	s := b.String()
	if len(s) > 50 {
		s = s[:50]
	}
	s = strings.Trim(s, "-")
	if s == "" {
		s = "board"
	}
	return s + "-" + hex.EncodeToString(sum[:4])
}

// Slug is "<org>/<dataset>/<name>", or the board's object name while its package is
// unresolved.
func Slug(lb *hubv1alpha1.Leaderboard) string {
	if s := boardres.Slug(lb); s != "" {
		return s
	}
	return lb.Namespace + "/?/" + lb.Spec.Name
}

func rawJSON(r json.RawMessage) *apiextensionsv1.JSON {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return &apiextensionsv1.JSON{Raw: append([]byte(nil), r...)}
}

func fromJSON(j *apiextensionsv1.JSON) json.RawMessage {
	if j == nil || len(j.Raw) == 0 {
		return nil
	}
	return json.RawMessage(j.Raw)
}

// SpecFromFile maps a definition file onto a Leaderboard spec.
func SpecFromFile(f *BoardFile) hubv1alpha1.LeaderboardSpec {
	s := hubv1alpha1.LeaderboardSpec{
		Package:            f.Package,
		PackageID:          f.PackageID,
		Name:               f.Name,
		Title:              f.Title,
		Description:        f.Description,
		Visibility:         hubv1alpha1.Visibility(f.Visibility),
		MetadataSchema:     rawJSON(f.MetadataSchema),
		MetricsSchema:      rawJSON(f.MetricsSchema),
		DatasetVersionRefs: copyList(f.DatasetVersionRefs),
		DatasetVersionIDs:  copyList(f.DatasetVersionIDs),
	}
	for _, c := range f.Columns {
		s.Columns = append(s.Columns, hubv1alpha1.Column{
			ID: c.ID, Header: c.Header, Accessor: c.Accessor, Type: hubv1alpha1.ColumnType(c.Type),
			DisplayAccessor: c.DisplayAccessor, DisplayType: hubv1alpha1.ColumnType(c.DisplayType),
			Align: hubv1alpha1.Align(c.Align), Description: c.Description, EnableSorting: c.EnableSorting,
		})
	}
	for _, r := range f.RankBy {
		s.RankBy = append(s.RankBy, hubv1alpha1.RankRule{
			Accessor: r.Accessor, Direction: hubv1alpha1.Direction(r.Direction), Nulls: hubv1alpha1.NullsPlacement(r.Nulls),
			Stderr: r.Stderr, IntervalLow: r.IntervalLow, IntervalHigh: r.IntervalHigh,
		})
	}
	return s
}

// FileFromSpec maps a Leaderboard spec onto a definition file.
func FileFromSpec(s *hubv1alpha1.LeaderboardSpec) BoardFile {
	f := BoardFile{
		Package:            s.Package,
		PackageID:          s.PackageID,
		Name:               s.Name,
		Title:              s.Title,
		Description:        s.Description,
		Visibility:         string(s.Visibility),
		MetadataSchema:     fromJSON(s.MetadataSchema),
		MetricsSchema:      fromJSON(s.MetricsSchema),
		DatasetVersionRefs: copyList(s.DatasetVersionRefs),
		DatasetVersionIDs:  copyList(s.DatasetVersionIDs),
	}
	f.Columns, f.RankBy = wire.Columns(s.Columns), wire.RankBy(s.RankBy)
	return f
}

func copyList(l *[]string) *[]string {
	if l == nil {
		return nil
	}
	c := append([]string{}, (*l)...)
	return &c
}

// RowSpecFromFile maps a row of a file onto a row spec of the given board.
func RowSpecFromFile(board string, r *RowFile) hubv1alpha1.LeaderboardRowSpec {
	s := hubv1alpha1.LeaderboardRowSpec{
		Leaderboard: board,
		Metadata:    rawJSON(r.Metadata),
		Metrics:     rawJSON(r.Metrics),
		Visibility:  hubv1alpha1.RowVisibility(r.Status),
	}
	if r.TrialIDs != nil {
		s.TrialIDs = append([]string{}, (*r.TrialIDs)...)
	}
	return s
}

// RowFileFromObject maps a row onto a file row with its id and updated_at token.
func RowFileFromObject(r *hubv1alpha1.LeaderboardRow) RowFile {
	ids := append([]string{}, r.Spec.TrialIDs...)
	return RowFile{
		ID:                hubv1alpha1.ID(r),
		ExpectedUpdatedAt: UpdatedAt(r),
		Metadata:          objectOrEmpty(r.Spec.Metadata),
		Metrics:           objectOrEmpty(r.Spec.Metrics),
		Status:            wire.RowStatus(r),
		TrialIDs:          &ids,
	}
}

func objectOrEmpty(j *apiextensionsv1.JSON) json.RawMessage {
	return wire.ObjectOrEmpty(fromJSON(j))
}

// BoardJSON is a leaderboard as the CLI's --json prints it: the read's shape (with the
// CLI's updated_at token, see UpdatedAt), plus whether the definition is Ready (and why
// not).
type BoardJSON struct {
	wire.Board
	Rows    int32  `json:"rows"`
	Ready   bool   `json:"ready"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// BoardToJSON renders a board for --json.
func BoardToJSON(lb *hubv1alpha1.Leaderboard) BoardJSON {
	b := BoardJSON{Board: wire.BoardOf(lb, UpdatedAt(lb)), Rows: lb.Status.Rows}
	if c := condition(lb.Status.Conditions, hubv1alpha1.ConditionReady, lb.Generation); c != nil {
		b.Ready = c.Status == metav1.ConditionTrue
		if !b.Ready {
			b.Reason, b.Message = c.Reason, c.Message
		}
	} else {
		b.Reason = "Pending"
	}
	return b
}

// RowJSON is a row as the CLI's --json prints it: the read's row (wire.Row, with its
// rank range and interval; docs/http-api.md), the trial ids, and whether the values are
// valid (and which fields are not).
type RowJSON struct {
	wire.Row
	// Rank replaces the read's: null for a row the read does not rank (hidden, invalid,
	// not yet validated), which only the CLI lists.
	Rank          *int                     `json:"rank"`
	TrialIDs      []string                 `json:"trial_ids"`
	Valid         *bool                    `json:"valid"`
	InvalidFields []hubv1alpha1.FieldError `json:"invalid_fields,omitempty"`
}

// RowToJSON renders a ranked row for --json. The CLI's caller may read the board, so
// created_by and updated_by are always shown.
func RowToJSON(boardID string, e RankedRow) RowJSON {
	r := e.Row
	j := RowJSON{
		Row: wire.Row{
			ID:            hubv1alpha1.ID(r),
			LeaderboardID: boardID,
			Rank:          e.Rank,
			Metadata:      objectOrEmpty(r.Spec.Metadata),
			Metrics:       objectOrEmpty(r.Spec.Metrics),
			Status:        wire.RowStatus(r),
			CreatedAt:     wire.Timestamp(hubv1alpha1.CreatedAt(r).Time),
			UpdatedAt:     UpdatedAt(r),
			NTrials:       len(r.Spec.TrialIDs),
			CreatedBy:     rowhistory.Author(r, hubv1alpha1.AnnotationCreatedBy),
			UpdatedBy:     rowhistory.Author(r, hubv1alpha1.AnnotationUpdatedBy),
		},
		TrialIDs: append([]string{}, r.Spec.TrialIDs...),
	}
	j.Provenance = wire.ProvenanceOf(r, true)
	j.Verified = j.Provenance != nil
	if e.Rank > 0 {
		rank := e.Rank
		j.Rank = &rank
	}
	if e.RankUpper > 0 {
		upper := e.RankUpper
		j.RankUpper = &upper
	}
	if e.Interval.OK {
		j.Interval = &wire.Interval{Low: e.Interval.Low, High: e.Interval.High}
	}
	if c := condition(r.Status.Conditions, hubv1alpha1.ConditionValid, r.Generation); c != nil {
		v := c.Status == metav1.ConditionTrue
		j.Valid = &v
		if !v {
			j.InvalidFields = r.Status.InvalidFields
		}
	}
	return j
}

// condition returns the condition of the given type when it describes the current
// generation, else nil (the controller has not looked at this generation yet).
func condition(conds []metav1.Condition, typ string, generation int64) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ && conds[i].ObservedGeneration == generation {
			return &conds[i]
		}
	}
	return nil
}
