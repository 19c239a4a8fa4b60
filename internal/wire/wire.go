// Package wire holds the JSON shapes of leaderboards as Podium's clients see them: the
// public read serves them (docs/http-api.md), and the CLI prints and reads the same
// shapes (--json, board files; docs/cli.md). Field names are snake_case.
package wire

import (
	"bytes"
	"encoding/json"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Board is a leaderboard.
type Board struct {
	ID                string          `json:"id"`
	PackageID         string          `json:"package_id"`
	Package           string          `json:"package"`
	DatasetVersionIDs []string        `json:"dataset_version_ids"`
	Name              string          `json:"name"`
	Title             string          `json:"title"`
	Description       *string         `json:"description"`
	MetadataSchema    json.RawMessage `json:"metadata_schema"`
	MetricsSchema     json.RawMessage `json:"metrics_schema"`
	Columns           []Column        `json:"columns"`
	RankBy            []RankRule      `json:"rank_by"`
	Visibility        string          `json:"visibility"`
	CreatedAt         string          `json:"created_at"`
	UpdatedAt         string          `json:"updated_at"`
}

// Column is a board's column.
type Column struct {
	ID              string `json:"id"`
	Header          string `json:"header"`
	Accessor        string `json:"accessor"`
	Type            string `json:"type"`
	DisplayAccessor string `json:"display_accessor,omitempty"`
	DisplayType     string `json:"display_type,omitempty"`
	Align           string `json:"align,omitempty"`
	Description     string `json:"description,omitempty"`
	EnableSorting   *bool  `json:"enable_sorting,omitempty"`
}

// RankRule is one of a board's ranking rules, with the uncertainty of its value when it
// names one (stderr, or interval_low and interval_high; docs/ranking.md, "Rank ranges").
type RankRule struct {
	Accessor     string `json:"accessor"`
	Direction    string `json:"direction"`
	Nulls        string `json:"nulls,omitempty"`
	Stderr       string `json:"stderr,omitempty"`
	IntervalLow  string `json:"interval_low,omitempty"`
	IntervalHigh string `json:"interval_high,omitempty"`
}

// Interval is a row's uncertainty interval on its board's uncertain rule.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Pagination describes one page of a list.
type Pagination struct {
	Total      int64 `json:"total"`
	Page       int64 `json:"page"`
	PageSize   int64 `json:"page_size"`
	TotalPages int64 `json:"total_pages"`
}

// Page describes page page (from 1) of size items of a list of total.
func Page(total, page, size int64) Pagination {
	return Pagination{Total: total, Page: page, PageSize: size, TotalPages: (total + size - 1) / size}
}

// EmptyObject is "{}", what a missing schema or row value is served as.
var EmptyObject = json.RawMessage(`{}`)

// ObjectOrEmpty is raw, or "{}" when raw is missing or null.
func ObjectOrEmpty(raw []byte) json.RawMessage {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return EmptyObject
	}
	return raw
}

// Timestamp is how times are served: RFC 3339 in UTC, to the second.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// BoardOf is lb's shape. updatedAt is the board's updated_at (the read and the CLI
// define it differently: see their callers).
func BoardOf(lb *hubv1alpha1.Leaderboard, updatedAt string) Board {
	pkg, pkgID := lb.Spec.Package, lb.Spec.PackageID
	if pkg == "" {
		pkg = lb.Status.Package
	}
	if pkgID == "" {
		pkgID = lb.Status.PackageID
	}
	vis := lb.Spec.Visibility
	if vis == "" {
		vis = hubv1alpha1.VisibilityPrivate
	}
	b := Board{
		ID:                hubv1alpha1.ID(lb),
		PackageID:         pkgID,
		Package:           pkg,
		DatasetVersionIDs: append([]string{}, lb.Status.DatasetVersionIDs...),
		Name:              lb.Spec.Name,
		Title:             lb.Spec.Title,
		Description:       lb.Spec.Description,
		MetadataSchema:    EmptyObject,
		MetricsSchema:     EmptyObject,
		Columns:           Columns(lb.Spec.Columns),
		RankBy:            RankBy(lb.Spec.RankBy),
		Visibility:        string(vis),
		CreatedAt:         Timestamp(hubv1alpha1.CreatedAt(lb).Time),
		UpdatedAt:         updatedAt,
	}
	if lb.Spec.MetadataSchema != nil {
		b.MetadataSchema = ObjectOrEmpty(lb.Spec.MetadataSchema.Raw)
	}
	if lb.Spec.MetricsSchema != nil {
		b.MetricsSchema = ObjectOrEmpty(lb.Spec.MetricsSchema.Raw)
	}
	if b.Columns == nil {
		b.Columns = []Column{}
	}
	if b.RankBy == nil {
		b.RankBy = []RankRule{}
	}
	return b
}

// Columns is the shape of a board's columns, nil for none.
func Columns(cols []hubv1alpha1.Column) []Column {
	return each(cols, func(c hubv1alpha1.Column) Column {
		return Column{
			ID: c.ID, Header: c.Header, Accessor: c.Accessor, Type: string(c.Type),
			DisplayAccessor: c.DisplayAccessor, DisplayType: string(c.DisplayType), Align: string(c.Align),
			Description: c.Description, EnableSorting: c.EnableSorting,
		}
	})
}

// RankBy is the shape of a board's ranking rules, nil for none.
func RankBy(rules []hubv1alpha1.RankRule) []RankRule {
	return each(rules, func(r hubv1alpha1.RankRule) RankRule {
		return RankRule{
			Accessor: r.Accessor, Direction: string(r.Direction), Nulls: string(r.Nulls),
			Stderr: r.Stderr, IntervalLow: r.IntervalLow, IntervalHigh: r.IntervalHigh,
		}
	})
}

// each maps every element of in with f; nil for none.
func each[A, B any](in []A, f func(A) B) []B {
	if len(in) == 0 {
		return nil
	}
	out := make([]B, len(in))
	for i, a := range in {
		out[i] = f(a)
	}
	return out
}

// ServedUpdatedAt is the updated_at the read serves for an object: the latest of its
// creation (hubv1alpha1.CreatedAt, which a restore keeps), specChanged (status.updatedAt, which the controller sets when it sees a new
// generation, whoever wrote it: kubectl, GitOps, the CLI) and the annotation
// hubv1alpha1.AnnotationUpdatedAt when a writer (the CLI) set it. The manager's cache
// strips managedFields (they would double each row's memory), so the write times come
// from there; docs/http-api.md explains.
func ServedUpdatedAt(m *metav1.ObjectMeta, specChanged *metav1.Time) time.Time {
	t := hubv1alpha1.CreatedAt(m).Time
	if specChanged != nil && specChanged.After(t) {
		t = specChanged.Time
	}
	if v, ok := m.Annotations[hubv1alpha1.AnnotationUpdatedAt]; ok {
		if a, err := time.Parse(time.RFC3339, v); err == nil && a.After(t) {
			t = a
		}
	}
	return t
}

// Row is a leaderboard row as the read serves it.
type Row struct {
	ID            string          `json:"id"`
	LeaderboardID string          `json:"leaderboard_id"`
	Rank          int             `json:"rank"`
	Metadata      json.RawMessage `json:"metadata"`
	Metrics       json.RawMessage `json:"metrics"`
	Status        string          `json:"status"`
	CreatedAt     string          `json:"created_at"`
	UpdatedAt     string          `json:"updated_at"`
	NTrials       int             `json:"n_trials"`
	// CreatedBy is who created the row, as the apiserver recorded it; null when
	// unknown or not shown (httpapi.ShowsAuthors).
	CreatedBy *string `json:"created_by"`
	// RankUpper is the best rank the row's uncertainty supports, on boards whose rules
	// name an uncertainty (docs/ranking.md, "Rank ranges"); absent on other boards.
	RankUpper *int `json:"rank_upper,omitempty"`
	// Interval is the row's uncertainty interval; absent when it has none.
	Interval *Interval `json:"interval,omitempty"`
	// UpdatedBy is who last changed the row's values, as the apiserver recorded it;
	// null when unknown or not shown, as CreatedBy.
	UpdatedBy *string `json:"updated_by"`
	// Verified says whether the row's current values were written by a run Podium
	// admitted (docs/verified-rows.md).
	Verified bool `json:"verified"`
	// Provenance is that run: null when the row is not verified.
	Provenance *Provenance `json:"provenance"`
}

// Provenance is the run that wrote a verified row (docs/verified-rows.md).
type Provenance struct {
	// JobID is the run's job id; null when it named none.
	JobID *string `json:"job_id"`
	// ImageDigest is the digest of the image the run's first container ran.
	ImageDigest string `json:"image_digest"`
	// Images are every container of the run and the digest it ran.
	Images []Image `json:"images"`
	// RanAt is when the run's Pod started; null when unknown.
	RanAt *string `json:"ran_at"`
	// DatasetVersionIDs are the board's dataset versions when the row was verified.
	DatasetVersionIDs []string `json:"dataset_version_ids"`
	// Requester is the run's owner; null when authors are not shown (as created_by).
	Requester *string `json:"requester"`
}

// Image is one container of a run.
type Image struct {
	Container string `json:"container"`
	Image     string `json:"image"`
	Digest    string `json:"digest"`
}

// Verified says whether row's current values were written by a run Podium admitted:
// its Verified condition is True for its current generation and the controller
// recorded the run.
func Verified(row *hubv1alpha1.LeaderboardRow) bool {
	if row.Status.Provenance == nil {
		return false
	}
	for _, c := range row.Status.Conditions {
		if c.Type == hubv1alpha1.ConditionVerified {
			return c.Status == metav1.ConditionTrue && c.ObservedGeneration == row.Generation
		}
	}
	return false
}

// ProvenanceOf is the served provenance of row, nil when it is not verified.
// showAuthors says whether the requester is shown (httpapi.ShowsAuthors).
func ProvenanceOf(row *hubv1alpha1.LeaderboardRow, showAuthors bool) *Provenance {
	if !Verified(row) {
		return nil
	}
	p := row.Status.Provenance
	out := &Provenance{Images: make([]Image, 0, len(p.Images)), DatasetVersionIDs: append([]string{}, p.DatasetVersionIDs...)}
	if p.JobID != "" {
		id := p.JobID
		out.JobID = &id
	}
	for _, img := range p.Images {
		out.Images = append(out.Images, Image{Container: img.Name, Image: img.Image, Digest: img.Digest()})
	}
	if len(out.Images) > 0 {
		out.ImageDigest = out.Images[0].Digest
	}
	if p.RanAt != nil {
		at := Timestamp(p.RanAt.Time)
		out.RanAt = &at
	}
	if showAuthors && p.Requester != "" {
		r := p.Requester
		out.Requester = &r
	}
	return out
}

// RowHistory is a row's change history (docs/leaderboards.md, "Change history"), newest
// change first.
type RowHistory struct {
	RowID         string  `json:"row_id"`
	LeaderboardID string  `json:"leaderboard_id"`
	CreatedAt     string  `json:"created_at"`
	CreatedBy     *string `json:"created_by"`
	UpdatedBy     *string `json:"updated_by"`
	// Changes are the kept changes, newest first.
	Changes []Change `json:"changes"`
}

// Change is one change of a row's values.
type Change struct {
	At string `json:"at"`
	// By is who made it; null when unknown or not shown.
	By            *string       `json:"by"`
	Generation    int64         `json:"generation"`
	Fields        []FieldChange `json:"fields"`
	OmittedFields int32         `json:"omitted_fields"`
}

// FieldChange is one field's old and new value: the JSON value itself, or, when it was
// cut, a string holding the first 256 bytes of its JSON with old_truncated or
// new_truncated set. old is absent for an added field, new for a removed one.
type FieldChange struct {
	Field        string          `json:"field"`
	Old          json.RawMessage `json:"old,omitempty"`
	OldTruncated bool            `json:"old_truncated,omitempty"`
	New          json.RawMessage `json:"new,omitempty"`
	NewTruncated bool            `json:"new_truncated,omitempty"`
}

// RowStatus is a row's status: its spec.visibility, display when unset.
func RowStatus(row *hubv1alpha1.LeaderboardRow) string {
	if row.Spec.Visibility == "" {
		return string(hubv1alpha1.RowDisplay)
	}
	return string(row.Spec.Visibility)
}
