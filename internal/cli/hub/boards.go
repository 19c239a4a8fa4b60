package hub

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/wire"
)

// MaxRowsPerRequest is the limit of new rows per create request (docs/cli.md).
const MaxRowsPerRequest = 500

// Config is a definition file as read: a snake_case board file, or manifests (docs/cli.md, Files).
type Config struct {
	File *BoardFile
	// Keys are the top-level keys the file holds: on update, only they change.
	Keys     map[string]bool
	Manifest *Manifest
}

// LoadConfig reads a definition file (YAML or JSON by extension, or Kubernetes
// manifests as `export --format manifest` writes them).
func LoadConfig(path string) (*Config, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	if isManifest(docs[0]) {
		m, err := parseManifest(docs)
		if err != nil {
			return nil, err
		}
		return &Config{Manifest: m}, nil
	}
	if len(docs) > 1 {
		return nil, apierr.BadRequest("", "%s: holds %d documents; a definition file holds one", path, len(docs))
	}
	var f BoardFile
	if err := docs[0].decodeStrict(&f); err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(docs[0].json, &keys); err != nil {
		return nil, apierr.BadRequest("", "%s: a definition file is an object", path)
	}
	cfg := &Config{File: &f, Keys: map[string]bool{}}
	for k := range keys {
		cfg.Keys[k] = true
	}
	return cfg, nil
}

// LoadRows reads a rows file ({rows: [...]}).
func LoadRows(path string) (*RowsFile, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	if len(docs) > 1 {
		return nil, apierr.BadRequest("", "%s: holds %d documents; a rows file holds one", path, len(docs))
	}
	var f RowsFile
	if err := docs[0].decodeStrict(&f); err != nil {
		return nil, err
	}
	if f.Rows == nil {
		return nil, docs[0].fieldError([]any{"rows"}, "is required: a list of rows")
	}
	return &f, nil
}

// LoadRow reads a one-row file (what `row export <row-id>` writes).
func LoadRow(path string) (*RowFile, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	if len(docs) > 1 {
		return nil, apierr.BadRequest("", "%s: holds %d documents; a row file holds one", path, len(docs))
	}
	var f RowFile
	if err := docs[0].decodeStrict(&f); err != nil {
		return nil, err
	}
	return &f, nil
}

// LoadTrialIDs reads a --trial-ids-file: a non-empty trial_ids list.
func LoadTrialIDs(path string) ([]string, error) {
	docs, err := readDocuments(path)
	if err != nil {
		return nil, err
	}
	var f TrialIDsFile
	if err := docs[0].decodeStrict(&f); err != nil {
		return nil, err
	}
	if len(f.TrialIDs) == 0 {
		return nil, docs[0].fieldError([]any{"trial_ids"}, "must be a non-empty list")
	}
	if i, j := DuplicateTrialID(f.TrialIDs); j >= 0 {
		return nil, docs[0].fieldError([]any{"trial_ids", j}, "trial %s is given twice (also trial_ids[%d])", f.TrialIDs[j], i)
	}
	return f.TrialIDs, nil
}

// Created is the result of a create.
type Created struct {
	Board *hubv1alpha1.Leaderboard
	Rows  []*hubv1alpha1.LeaderboardRow
}

// CreateBoard creates a leaderboard from a definition file, with rows from the
// config's manifests and/or a rows file, all or nothing: everything is validated
// (client side, then a server-side dry-run) before the first write, and a failed write
// removes what was created.
func (c *Client) CreateBoard(ctx context.Context, cfg *Config, rows *RowsFile, over BoardFlags) (*Created, error) {
	now := time.Now()
	lb, manifestRows, err := c.boardToCreate(ctx, cfg, over)
	if err != nil {
		return nil, err
	}
	touch(lb, now)
	var inputs []RowInput
	for i := range manifestRows {
		inputs = append(inputs, RowInput{Index: i, Spec: manifestRows[i].Spec})
	}
	if rows != nil {
		if n := len(rows.Rows); n < 1 || n > MaxRowsPerRequest {
			return nil, apierr.BadRequest("rows", "%d rows; a rows file adds 1 to %d rows", n, MaxRowsPerRequest)
		}
		for i := range rows.Rows {
			if rows.Rows[i].ID != "" {
				return nil, apierr.BadRequest(fmt.Sprintf("rows[%d].id", i), "a new leaderboard's rows are new: remove the id")
			}
			inputs = append(inputs, RowInput{Index: len(manifestRows) + i, Spec: RowSpecFromFile(lb.Name, &rows.Rows[i])})
		}
	}
	if err := c.ValidateRows(&lb.Spec, inputs); err != nil {
		return nil, err
	}
	p := &plan{board: &write{obj: lb, index: -1, what: "leaderboard " + Slug(lb)}}
	for i, in := range inputs {
		var row *hubv1alpha1.LeaderboardRow
		if i < len(manifestRows) {
			m := manifestRows[i]
			row = &hubv1alpha1.LeaderboardRow{Spec: m.Spec}
			row.Name, row.GenerateName, row.Namespace = m.Name, m.GenerateName, lb.Namespace
			row.Labels, row.Annotations = cleanLabels(m.Labels), cleanAnnotations(m.Annotations)
			if row.Name == "" && row.GenerateName == "" {
				row.GenerateName = lb.Name + "-"
			}
			ownRow(row, lb)
			touch(row, now)
		} else {
			row = newRow(lb, in.Spec, now)
		}
		p.rows = append(p.rows, &write{obj: row, index: in.Index, what: fmt.Sprintf("rows[%d]", in.Index), row: true})
	}
	p.beforeRows = func(board client.Object) {
		for _, w := range p.rows {
			ownRow(w.obj.(*hubv1alpha1.LeaderboardRow), board)
		}
	}
	if err := c.execute(ctx, p, true); err != nil {
		return nil, err
	}
	c.awaitNewRowIDs(ctx, lb, p)
	out := &Created{Board: lb}
	for _, w := range p.rows {
		out.Rows = append(out.Rows, w.obj.(*hubv1alpha1.LeaderboardRow))
	}
	return out, nil
}

// BoardFlags are the definition flags of `create`: set ones override the --config
// file's values (a board can be created from flags alone).
type BoardFlags struct {
	Package, Name, Title, Visibility string
	Description                      *string
	// VersionFlags is true when a dataset-version flag was given: Refs and IDs then
	// replace the file's.
	VersionFlags bool
	Refs, IDs    []string
}

func (f BoardFlags) apply(s *hubv1alpha1.LeaderboardSpec) {
	if f.Package != "" {
		s.Package, s.PackageID = f.Package, ""
	}
	if f.Name != "" {
		s.Name = f.Name
	}
	if f.Title != "" {
		s.Title = f.Title
	}
	if f.Description != nil {
		d := *f.Description
		s.Description = &d
	}
	if f.Visibility != "" {
		s.Visibility = hubv1alpha1.Visibility(f.Visibility)
	}
	if f.VersionFlags {
		refs, ids := append([]string{}, f.Refs...), append([]string{}, f.IDs...)
		s.DatasetVersionRefs, s.DatasetVersionIDs = &refs, &ids
	}
}

// boardToCreate builds the Leaderboard object a definition (a file, flags, or both)
// describes: its namespace is the dataset's org, its object name derived from the slug
// (or the manifest's).
func (c *Client) boardToCreate(ctx context.Context, cfg *Config, over BoardFlags) (*hubv1alpha1.Leaderboard, []hubv1alpha1.LeaderboardRow, error) {
	lb := &hubv1alpha1.Leaderboard{}
	var rows []hubv1alpha1.LeaderboardRow
	switch {
	case cfg == nil:
	case cfg.Manifest != nil:
		m := cfg.Manifest.Board
		lb.Spec = *m.Spec.DeepCopy()
		lb.Name, lb.Namespace = m.Name, m.Namespace
		lb.Labels, lb.Annotations = cleanLabels(m.Labels), cleanAnnotations(m.Annotations)
		rows = cfg.Manifest.Rows
	default:
		lb.Spec = SpecFromFile(cfg.File)
	}
	over.apply(&lb.Spec)
	var missing []apierr.FieldError
	if lb.Spec.Package == "" && lb.Spec.PackageID == "" {
		missing = append(missing, apierr.FieldError{Field: "package", Message: "is required (--package, or package or package_id in --config)"})
	}
	if lb.Spec.Name == "" {
		missing = append(missing, apierr.FieldError{Field: "name", Message: "is required (--name, or name in --config)"})
	}
	if lb.Spec.Title == "" {
		missing = append(missing, apierr.FieldError{Field: "title", Message: "is required (--title, or title in --config)"})
	}
	if len(missing) > 0 {
		e := apierr.BadRequest("", "%s", missingText(missing))
		e.Details = missing
		return nil, nil, e
	}
	org, dataset, err := c.datasetOf(ctx, &lb.Spec)
	if err != nil {
		return nil, nil, err
	}
	if lb.Namespace != "" && lb.Namespace != org {
		return nil, nil, apierr.BadRequest("metadata.namespace", "%q is not the dataset's org %q", lb.Namespace, org)
	}
	lb.Namespace = org
	if lb.Name == "" {
		lb.Name = BoardObjectName(dataset, lb.Spec.Name)
	}
	if err := c.refuseExisting(ctx, org+"/"+dataset, lb); err != nil {
		return nil, nil, err
	}
	return lb, rows, nil
}

// refuseExisting answers 409 conflict when the org already has a board of this slug
// (or of this object name): creating it again is not a validation problem of the file.
func (c *Client) refuseExisting(ctx context.Context, pkg string, lb *hubv1alpha1.Leaderboard) error {
	var list hubv1alpha1.LeaderboardList
	if err := c.c.List(ctx, &list, client.InNamespace(lb.Namespace)); err != nil {
		return KubeError(err, "leaderboards of "+lb.Namespace)
	}
	for i := range list.Items {
		cur := &list.Items[i]
		samePkg := cmp.Or(cur.Spec.Package, cur.Status.Package) == pkg
		if cur.Name == lb.Name || cur.Spec.Name == lb.Spec.Name && samePkg {
			e := apierr.New(http.StatusConflict, apierr.CodeConflict,
				"leaderboard %s/%s already exists (id %s); change it with `podium hub leaderboard update`", pkg, lb.Spec.Name, cur.UID)
			e.Details = map[string]string{"resource": "leaderboard " + pkg + "/" + lb.Spec.Name, "id": string(cur.UID)}
			return e
		}
	}
	return nil
}

// datasetOf returns the org (namespace) and dataset name of a definition's package or
// package_id.
func (c *Client) datasetOf(ctx context.Context, s *hubv1alpha1.LeaderboardSpec) (string, string, error) {
	switch {
	case s.Package != "" && s.PackageID != "":
		return "", "", apierr.BadRequest("package_id", "package and package_id are mutually exclusive")
	case s.Package != "":
		org, ds, ok := strings.Cut(s.Package, "/")
		if !ok || org == "" || ds == "" || strings.Contains(ds, "/") {
			return "", "", apierr.BadRequest("package", "%q is not <org>/<dataset>", s.Package)
		}
		return org, ds, nil
	case s.PackageID != "":
		var list hubv1alpha1.DatasetList
		if err := c.findByID(ctx, &list, s.PackageID); err != nil {
			return "", "", KubeError(err, "dataset "+s.PackageID)
		}
		for _, d := range list.Items {
			if strings.EqualFold(string(d.UID), s.PackageID) {
				return d.Namespace, d.Name, nil
			}
		}
		// Datasets are few per org: without the id label, look through --org's.
		if c.org != "" {
			var all hubv1alpha1.DatasetList
			if err := c.c.List(ctx, &all, client.InNamespace(c.org)); err != nil {
				return "", "", KubeError(err, "datasets of "+c.org)
			}
			for _, d := range all.Items {
				if strings.EqualFold(string(d.UID), s.PackageID) {
					return d.Namespace, d.Name, nil
				}
			}
		}
		return "", "", apierr.BadRequest("package_id", "no dataset has id %s", s.PackageID)
	}
	return "", "", apierr.BadRequest("package", "one of package or package_id is required")
}

// UpdateRequest is what `update` changes. Nil fields keep the current value.
type UpdateRequest struct {
	Config      *Config
	Title       *string
	Description *string
	Visibility  string
	// VersionFlags is true when a dataset-version flag was given: Refs and IDs then
	// replace the associations (docs/cli.md).
	VersionFlags bool
	Refs, IDs    []string
	Rows         *RowsFile
	DryRun       bool
}

// UpdateResult says what an update changed (or, with DryRun, would change).
type UpdateResult struct {
	Board        *hubv1alpha1.Leaderboard `json:"-"`
	Changed      []string                 `json:"changed_fields"`
	Diff         []FieldDiff              `json:"diff"`
	RowsUpdated  []string                 `json:"rows_updated"`
	RowsCreated  []string                 `json:"rows_created"`
	RowsSkipped  int                      `json:"rows_unchanged"`
	RowDiffs     []RowDiff                `json:"row_diffs"`
	DryRun       bool                     `json:"dry_run"`
	newRowWrites []*write
}

// FieldDiff is one changed definition field, old and new value.
type FieldDiff struct {
	Field string          `json:"field"`
	Old   json.RawMessage `json:"old"`
	New   json.RawMessage `json:"new"`
}

// RowDiff is one row an update writes: an id and its changed fields, or a new row.
type RowDiff struct {
	Index  int      `json:"index"`
	ID     string   `json:"id,omitempty"`
	New    bool     `json:"new,omitempty"`
	Fields []string `json:"fields,omitempty"`
}

// Stale is the 409 of a file whose target changed since it was exported.
func Stale(resource, expected, actual string) error {
	e := apierr.New(http.StatusConflict, apierr.CodeStale,
		"%s changed since the file was exported (expected_updated_at %s, now %s); export it again and reapply your edits", resource, expected, actual)
	e.Details = map[string]string{"resource": resource, "expected_updated_at": expected, "actual_updated_at": actual}
	return e
}

// UpdateBoard changes a leaderboard's definition and/or applies a rows file, as one
// transaction: every file is checked (identity, package and name, staleness), every
// row validated, every write dry-run on the server; then the writes are made with
// resourceVersion preconditions, and a failure restores what was written.
func (c *Client) UpdateBoard(ctx context.Context, lb *hubv1alpha1.Leaderboard, req UpdateRequest) (*UpdateResult, error) {
	now := time.Now()
	next := lb.DeepCopy()
	if req.Config != nil {
		if err := applyConfig(lb, &next.Spec, req.Config); err != nil {
			return nil, err
		}
	}
	if req.Title != nil {
		next.Spec.Title = *req.Title
	}
	if req.Description != nil {
		d := *req.Description
		next.Spec.Description = &d
	}
	if req.Visibility != "" {
		next.Spec.Visibility = hubv1alpha1.Visibility(req.Visibility)
	}
	if req.VersionFlags {
		refs, ids := append([]string{}, req.Refs...), append([]string{}, req.IDs...)
		next.Spec.DatasetVersionRefs, next.Spec.DatasetVersionIDs = &refs, &ids
	}
	res := &UpdateResult{DryRun: req.DryRun, Diff: specDiff(&lb.Spec, &next.Spec)}
	for _, d := range res.Diff {
		res.Changed = append(res.Changed, d.Field)
	}
	p := &plan{}
	if len(res.Diff) > 0 {
		touch(next, now)
		p.board = &write{obj: next, old: lb, index: -1, what: "leaderboard " + Slug(lb)}
	}
	if req.Rows != nil {
		if err := c.planRows(ctx, lb, &next.Spec, req.Rows, p, res, now); err != nil {
			return nil, err
		}
	}
	if err := c.refuseInvalidating(ctx, lb, &next.Spec, req.Rows); err != nil {
		return nil, err
	}
	res.Board = next
	if req.DryRun {
		if err := c.dryRun(ctx, p); err != nil {
			return nil, err
		}
		res.Board = lb
		return res, nil
	}
	if p.board == nil && len(p.rows) == 0 {
		res.Board = lb
		return res, nil
	}
	if err := c.execute(ctx, p, true); err != nil {
		return nil, err
	}
	c.awaitNewRowIDs(ctx, lb, p)
	if p.board == nil {
		res.Board = lb
	}
	for _, w := range res.newRowWrites {
		res.RowsCreated = append(res.RowsCreated, string(w.obj.GetUID()))
	}
	return res, nil
}

// applyConfig applies a definition file to spec. Only the keys the file holds change
// (a key holding null or [] is a change: it empties the field; an absent key keeps
// the current value); an exported file holds every key, so export, edit, update
// replaces the whole definition. A manifest is a whole spec: every key is present.
func applyConfig(lb *hubv1alpha1.Leaderboard, spec *hubv1alpha1.LeaderboardSpec, cfg *Config) error {
	var f BoardFile
	has := cfg.Keys
	if cfg.Manifest != nil {
		f = FileFromSpec(&cfg.Manifest.Board.Spec)
		if m := cfg.Manifest.Board; m.Namespace != "" && m.Namespace != lb.Namespace || m.Name != "" && m.Name != lb.Name {
			return apierr.BadRequest("metadata.name", "the manifest is for %s/%s, not for %s/%s", m.Namespace, m.Name, lb.Namespace, lb.Name)
		}
		if len(cfg.Manifest.Rows) > 0 {
			return apierr.BadRequest("rows", "update --config takes the definition only; apply rows with --rows")
		}
		has = map[string]bool{}
		for _, k := range definitionKeys {
			has[k] = true
		}
	} else {
		f = *cfg.File
	}
	if f.LeaderboardID != "" && f.LeaderboardID != string(lb.UID) {
		return apierr.BadRequest("leaderboard_id", "the file is for leaderboard %s, not %s", f.LeaderboardID, lb.UID)
	}
	curPkg := cmp.Or(lb.Spec.Package, lb.Status.Package)
	curPkgID := cmp.Or(lb.Spec.PackageID, lb.Status.PackageID)
	if f.Package != "" && f.Package != curPkg {
		return apierr.Invalid(apierr.FieldError{Field: "package", Message: fmt.Sprintf("cannot be changed (is %q, the file says %q)", curPkg, f.Package)})
	}
	if f.PackageID != "" && !strings.EqualFold(f.PackageID, curPkgID) {
		return apierr.Invalid(apierr.FieldError{Field: "package_id", Message: fmt.Sprintf("cannot be changed (is %q, the file says %q)", curPkgID, f.PackageID)})
	}
	if f.Name != "" && f.Name != lb.Spec.Name {
		return apierr.Invalid(apierr.FieldError{Field: "name", Message: fmt.Sprintf("cannot be changed (is %q, the file says %q)", lb.Spec.Name, f.Name)})
	}
	if f.ExpectedUpdatedAt != "" {
		if actual := UpdatedAt(lb); actual != f.ExpectedUpdatedAt {
			return Stale("leaderboard "+Slug(lb), f.ExpectedUpdatedAt, actual)
		}
	}
	from := SpecFromFile(&f)
	if has["title"] {
		if from.Title == "" {
			return apierr.Invalid(apierr.FieldError{Field: "title", Message: "must be 1 to 200 characters; a title cannot be removed"})
		}
		spec.Title = from.Title
	}
	if has["description"] {
		spec.Description = from.Description
	}
	if has["visibility"] {
		spec.Visibility = from.Visibility // null: the default, private
	}
	// A schema left out and {} mean the same (no constraint): exporting a board without
	// one writes {}, and applying that back is no change.
	if has["metadata_schema"] && !jsonEqual(objectOrEmpty(spec.MetadataSchema), objectOrEmpty(from.MetadataSchema)) {
		spec.MetadataSchema = from.MetadataSchema
	}
	if has["metrics_schema"] && !jsonEqual(objectOrEmpty(spec.MetricsSchema), objectOrEmpty(from.MetricsSchema)) {
		spec.MetricsSchema = from.MetricsSchema
	}
	if has["columns"] {
		spec.Columns = from.Columns
	}
	if has["rank_by"] {
		spec.RankBy = from.RankBy
	}
	if has["dataset_version_refs"] {
		spec.DatasetVersionRefs = from.DatasetVersionRefs
	}
	if has["dataset_version_ids"] {
		spec.DatasetVersionIDs = from.DatasetVersionIDs
	}
	return nil
}

// definitionKeys are the keys of a definition file that update can change.
var definitionKeys = []string{"title", "description", "visibility", "metadata_schema", "metrics_schema", "columns", "rank_by", "dataset_version_refs", "dataset_version_ids"}

// specDiff lists the definition fields that differ, in the file's (snake_case) names.
func specDiff(a, b *hubv1alpha1.LeaderboardSpec) []FieldDiff {
	fa, fb := FileFromSpec(a), FileFromSpec(b)
	ma, mb := toMap(fa), toMap(fb)
	var out []FieldDiff
	for _, k := range definitionKeys {
		va, vb := ma[k], mb[k]
		if k == "visibility" {
			va, vb = visOrDefault(va), visOrDefault(vb)
		}
		if !jsonEqual(va, vb) {
			out = append(out, FieldDiff{Field: k, Old: orNull(va), New: orNull(vb)})
		}
	}
	return out
}

func visOrDefault(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage(`"private"`)
	}
	return v
}

func toMap(v any) map[string]json.RawMessage {
	j, _ := json.Marshal(v)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(j, &m)
	return m
}

func orNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}

// jsonEqual compares two JSON values semantically (key order and spacing aside). An
// absent value equals an empty object or list only where the API treats them alike.
func jsonEqual(a, b json.RawMessage) bool {
	norm := func(r json.RawMessage) string {
		if len(r) == 0 {
			return "null"
		}
		var v any
		if err := json.Unmarshal(r, &v); err != nil {
			return string(r)
		}
		j, _ := json.Marshal(v)
		return string(j)
	}
	return norm(a) == norm(b)
}

// planRows adds a rows file's writes to a plan: rows with an id update that row of this
// board (refused when stale), rows without one are new. Unchanged rows are skipped.
func (c *Client) planRows(ctx context.Context, lb *hubv1alpha1.Leaderboard, spec *hubv1alpha1.LeaderboardSpec, f *RowsFile, p *plan, res *UpdateResult, now time.Time) error {
	if err := checkRowsFileTarget(lb, f); err != nil {
		return err
	}
	if len(f.Rows) == 0 {
		return apierr.BadRequest("rows", "the rows file has no rows")
	}
	existing, err := c.rowsByID(ctx, lb, f.Rows)
	if err != nil {
		return err
	}
	var inputs []RowInput
	newRows := 0
	for i := range f.Rows {
		fr := &f.Rows[i]
		if fr.ID == "" {
			newRows++
			inputs = append(inputs, RowInput{Index: i, Spec: RowSpecFromFile(lb.Name, fr)})
			continue
		}
		cur := existing[strings.ToLower(fr.ID)]
		if cur == nil {
			return apierr.NotFound("rows[%d]: row %s is not a row of leaderboard %s", i, fr.ID, Slug(lb))
		}
		if fr.ExpectedUpdatedAt != "" {
			if actual := UpdatedAt(cur); actual != fr.ExpectedUpdatedAt {
				return Stale(fmt.Sprintf("rows[%d] (row %s)", i, fr.ID), fr.ExpectedUpdatedAt, actual)
			}
		}
		nextSpec := mergeRow(&cur.Spec, fr)
		inputs = append(inputs, RowInput{Index: i, ID: fr.ID, Spec: nextSpec})
	}
	if newRows > MaxRowsPerRequest {
		return apierr.BadRequest("rows", "%d new rows; at most %d per request", newRows, MaxRowsPerRequest)
	}
	if err := c.ValidateRows(spec, inputs); err != nil {
		return err
	}
	for _, in := range inputs {
		if in.ID == "" {
			w := &write{obj: newRow(lb, in.Spec, now), index: in.Index, what: fmt.Sprintf("rows[%d]", in.Index), row: true}
			p.rows = append(p.rows, w)
			res.newRowWrites = append(res.newRowWrites, w)
			res.RowDiffs = append(res.RowDiffs, RowDiff{Index: in.Index, New: true})
			continue
		}
		cur := existing[strings.ToLower(in.ID)]
		fields := rowDiff(&cur.Spec, &in.Spec)
		if len(fields) == 0 {
			res.RowsSkipped++
			continue
		}
		next := cur.DeepCopy()
		next.Spec = in.Spec
		touch(next, now)
		p.rows = append(p.rows, &write{obj: next, old: cur, index: in.Index, what: fmt.Sprintf("rows[%d] (row %s)", in.Index, in.ID)})
		res.RowsUpdated = append(res.RowsUpdated, in.ID)
		res.RowDiffs = append(res.RowDiffs, RowDiff{Index: in.Index, ID: in.ID, Fields: fields})
	}
	return nil
}

// rowsByID fetches the rows a file names by id: one id lookup each for a few, one
// listing of the board's rows for many (fewer round trips than hundreds of lookups).
func (c *Client) rowsByID(ctx context.Context, lb *hubv1alpha1.Leaderboard, rows []RowFile) (map[string]*hubv1alpha1.LeaderboardRow, error) {
	out := map[string]*hubv1alpha1.LeaderboardRow{}
	var ids []string
	for i, r := range rows {
		if r.ID == "" {
			continue
		}
		if !hubv1alpha1.IsUUID(r.ID) {
			return nil, apierr.BadRequest(fmt.Sprintf("rows[%d].id", i), "%q is not a UUID", r.ID)
		}
		if _, dup := out[strings.ToLower(r.ID)]; dup {
			return nil, apierr.BadRequest(fmt.Sprintf("rows[%d].id", i), "row %s appears twice", r.ID)
		}
		out[strings.ToLower(r.ID)] = nil
		ids = append(ids, r.ID)
	}
	keep := func(r *hubv1alpha1.LeaderboardRow) {
		if r.Namespace == lb.Namespace && r.Spec.Leaderboard == lb.Name {
			if _, want := out[string(r.UID)]; want {
				out[string(r.UID)] = r
			}
		}
	}
	if len(ids) > 20 {
		all, err := c.BoardRows(ctx, lb)
		if err != nil {
			return nil, err
		}
		for i := range all {
			keep(&all[i])
		}
		return out, nil
	}
	found := make([]*hubv1alpha1.LeaderboardRow, len(ids))
	errs := parallel(ctx, c.workers, len(ids), func(ctx context.Context, i int) error {
		r, err := c.Row(ctx, ids[i])
		if apierr.As(err).Code == apierr.CodeNotFound {
			return nil
		}
		found[i] = r
		return err
	})
	if _, err := firstError(errs); err != nil {
		return nil, err
	}
	for _, r := range found {
		if r != nil {
			keep(r)
		}
	}
	return out, nil
}

// mergeRow applies a file row to a row spec: what the file gives replaces, what it
// omits is kept.
func mergeRow(cur *hubv1alpha1.LeaderboardRowSpec, fr *RowFile) hubv1alpha1.LeaderboardRowSpec {
	next := *cur.DeepCopy()
	if fr.Metadata != nil {
		next.Metadata = rawJSON(fr.Metadata)
	}
	if fr.Metrics != nil {
		next.Metrics = rawJSON(fr.Metrics)
	}
	if fr.Status != "" {
		next.Visibility = hubv1alpha1.RowVisibility(fr.Status)
	}
	if fr.TrialIDs != nil {
		next.TrialIDs = append([]string{}, (*fr.TrialIDs)...)
	}
	return next
}

// rowDiff names the file fields that differ between two row specs.
func rowDiff(a, b *hubv1alpha1.LeaderboardRowSpec) []string {
	var out []string
	if !jsonEqual(objectOrEmpty(a.Metadata), objectOrEmpty(b.Metadata)) {
		out = append(out, "metadata")
	}
	if !jsonEqual(objectOrEmpty(a.Metrics), objectOrEmpty(b.Metrics)) {
		out = append(out, "metrics")
	}
	va, vb := a.Visibility, b.Visibility
	if va == "" {
		va = hubv1alpha1.RowDisplay
	}
	if vb == "" {
		vb = hubv1alpha1.RowDisplay
	}
	if va != vb {
		out = append(out, "status")
	}
	ta, _ := json.Marshal(append([]string{}, a.TrialIDs...))
	tb, _ := json.Marshal(append([]string{}, b.TrialIDs...))
	if !bytes.Equal(ta, tb) {
		out = append(out, "trial_ids")
	}
	return out
}

// ExportBoard renders a board's definition as a file: the file's fields with
// leaderboard_id and expected_updated_at, or (format manifest) the board and all its
// rows as Kubernetes manifests.
func (c *Client) ExportBoard(ctx context.Context, lb *hubv1alpha1.Leaderboard, format, fileFormat Format) ([]byte, error) {
	if format == FormatManifest {
		rows, err := c.BoardRows(ctx, lb)
		if err != nil {
			return nil, err
		}
		sortByCreation(rows)
		return RenderManifest(lb, rows, fileFormat)
	}
	f := FileFromSpec(&lb.Spec)
	full := boardExport{
		LeaderboardID: string(lb.UID), ExpectedUpdatedAt: UpdatedAt(lb),
		Package: f.Package, PackageID: f.PackageID, Name: f.Name, Title: f.Title, Description: f.Description,
		Visibility:     cmp.Or(f.Visibility, string(hubv1alpha1.VisibilityPrivate)),
		MetadataSchema: objectOrEmpty(lb.Spec.MetadataSchema), MetricsSchema: objectOrEmpty(lb.Spec.MetricsSchema),
		Columns: f.Columns, RankBy: f.RankBy, DatasetVersionRefs: f.DatasetVersionRefs, DatasetVersionIDs: f.DatasetVersionIDs,
	}
	if full.Columns == nil {
		full.Columns = []wire.Column{}
	}
	if full.RankBy == nil {
		full.RankBy = []wire.RankRule{}
	}
	return Marshal(full, fileFormat)
}

// boardExport is what export writes: a BoardFile holding every definition key, even
// empty ones (null description, {} schemas, [] columns and rank_by), so that `update
// --config` of the edited file replaces the whole definition (update changes only
// the keys a file holds). dataset_version_refs and _ids are written when set.
type boardExport struct {
	LeaderboardID      string          `json:"leaderboard_id"`
	ExpectedUpdatedAt  string          `json:"expected_updated_at"`
	Package            string          `json:"package,omitempty"`
	PackageID          string          `json:"package_id,omitempty"`
	Name               string          `json:"name"`
	Title              string          `json:"title"`
	Description        *string         `json:"description"`
	Visibility         string          `json:"visibility"`
	MetadataSchema     json.RawMessage `json:"metadata_schema"`
	MetricsSchema      json.RawMessage `json:"metrics_schema"`
	Columns            []wire.Column   `json:"columns"`
	RankBy             []wire.RankRule `json:"rank_by"`
	DatasetVersionRefs *[]string       `json:"dataset_version_refs,omitempty"`
	DatasetVersionIDs  *[]string       `json:"dataset_version_ids,omitempty"`
}

// InitFile is the example definition `init` writes (docs/cli.md): an agent text column,
// a reward number column, ranked by reward, highest first, missing rewards last.
func InitFile(pkg, name, title string) BoardFile {
	desc := "Results of agents on " + pkg + "."
	enable := true
	return BoardFile{
		Package:        pkg,
		Name:           name,
		Title:          title,
		Description:    &desc,
		Visibility:     string(hubv1alpha1.VisibilityPrivate),
		MetadataSchema: json.RawMessage(`{"type":"object","properties":{"agent":{"type":"string"}},"required":["agent"]}`),
		MetricsSchema:  json.RawMessage(`{"type":"object","properties":{"reward":{"type":["number","null"]}}}`),
		Columns: []wire.Column{
			{ID: "agent", Header: "Agent", Accessor: "metadata.agent", Type: string(hubv1alpha1.ColumnText)},
			{ID: "reward", Header: "Reward", Accessor: "metrics.reward", Type: string(hubv1alpha1.ColumnNumber), Align: "right", EnableSorting: &enable},
		},
		RankBy: []wire.RankRule{{Accessor: "metrics.reward", Direction: string(hubv1alpha1.Descending), Nulls: string(hubv1alpha1.NullsLast)}},
	}
}

// InitManifest is the init example as a Leaderboard manifest.
func InitManifest(pkg, name, title string, f Format) ([]byte, error) {
	file := InitFile(pkg, name, title)
	lb := &hubv1alpha1.Leaderboard{Spec: SpecFromFile(&file)}
	org, ds, ok := strings.Cut(pkg, "/")
	if !ok {
		return nil, apierr.BadRequest("package", "%q is not <org>/<dataset>", pkg)
	}
	lb.Namespace, lb.Name = org, BoardObjectName(ds, name)
	return RenderManifest(lb, nil, f)
}

// missingText says which required fields are missing, all of them.
func missingText(missing []apierr.FieldError) string {
	names := make([]string, len(missing))
	for i, m := range missing {
		names[i] = m.Field
	}
	if len(names) == 1 {
		return missing[0].Field + ": " + missing[0].Message
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " are required (flags, or keys of --config)"
}

// refuseInvalidating refuses a definition change that would make existing rows invalid
// (a schema tightened, a property gone): every row of the board that the transaction
// does not rewrite and that is valid under the current schemas is validated under the
// new ones, with the controller's validator. Rows the transaction's rows file rewrites
// were validated against the new definition already, so a change that fixes its rows in
// the same transaction goes through. This lists the board's rows, and only when a
// schema changes.
func (c *Client) refuseInvalidating(ctx context.Context, lb *hubv1alpha1.Leaderboard, next *hubv1alpha1.LeaderboardSpec, f *RowsFile) error {
	if c.ValidateFn == nil || jsonEqual(objectOrEmpty(lb.Spec.MetadataSchema), objectOrEmpty(next.MetadataSchema)) &&
		jsonEqual(objectOrEmpty(lb.Spec.MetricsSchema), objectOrEmpty(next.MetricsSchema)) {
		return nil
	}
	rewritten := map[string]bool{}
	if f != nil {
		for _, r := range f.Rows {
			rewritten[strings.ToLower(r.ID)] = true
		}
	}
	rows, err := c.BoardRows(ctx, lb)
	if err != nil {
		return err
	}
	sortByCreation(rows)
	var details RowsInvalid
	for i := range rows {
		r := &rows[i]
		if rewritten[string(r.UID)] || len(c.ValidateFn(&lb.Spec, &r.Spec)) > 0 {
			continue
		}
		fields := c.ValidateFn(next, &r.Spec)
		if len(fields) == 0 {
			continue
		}
		details.InvalidRowCount++
		if len(details.InvalidRows) == maxInvalidListed {
			details.Truncated = true
			continue
		}
		details.InvalidRows = append(details.InvalidRows, InvalidRow{ID: string(r.UID), Fields: fields})
	}
	if details.InvalidRowCount == 0 {
		return nil
	}
	first := details.InvalidRows[0]
	e := apierr.New(http.StatusUnprocessableEntity, apierr.CodeRowsInvalid,
		"the new definition would make %s invalid (row %s: %s: %s); fix them in the same update with --rows, or change the definition; nothing was written",
		existingRows(details.InvalidRowCount), first.ID, first.Fields[0].Field, first.Fields[0].Message)
	e.Details = details
	return e
}

func existingRows(n int) string {
	if n == 1 {
		return "1 existing row"
	}
	return fmt.Sprintf("%d existing rows", n)
}
