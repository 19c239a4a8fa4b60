package hub

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
)

// UpdateRequest is what `update` changes. Nil fields keep the current value.
type UpdateRequest struct {
	Config *Config
	Title  *string
	DefinitionFlags
	Rows   *RowsFile
	DryRun bool
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

// UpdateBoard changes a leaderboard's definition and/or applies a rows file, as one
// transaction: every file is checked (identity, package and name, staleness), every
// row validated, every write dry-run on the server; then the writes are made with
// resourceVersion preconditions, and a failure restores what was written.
func (c *Client) UpdateBoard(ctx context.Context, lb *hubv1alpha1.Leaderboard, req UpdateRequest) (*UpdateResult, error) {
	now := time.Now()
	if req.Config != nil && req.Config.File != nil && req.Config.File.ExpectedUpdatedAt != "" || req.Rows != nil && req.Rows.ExpectedUpdatedAt != "" {
		c.Settle(ctx, lb)
	}
	next := lb.DeepCopy()
	if err := req.apply(lb, &next.Spec); err != nil {
		return nil, err
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

// apply sets the definition the request gives on spec (of lb): the --config file's
// keys, then the flags over them.
func (req *UpdateRequest) apply(lb *hubv1alpha1.Leaderboard, spec *hubv1alpha1.LeaderboardSpec) error {
	if req.Config != nil {
		if err := applyConfig(lb, spec, req.Config); err != nil {
			return err
		}
	}
	if req.Title != nil {
		spec.Title = *req.Title
	}
	req.DefinitionFlags.apply(spec)
	return nil
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
	if err := checkConfigTarget(lb, &f); err != nil {
		return err
	}
	return applyKeys(spec, &f, has)
}

// checkConfigTarget refuses a definition file of another board (leaderboard_id), one
// that would change the board's package or name, and a stale one.
func checkConfigTarget(lb *hubv1alpha1.Leaderboard, f *BoardFile) error {
	if f.LeaderboardID != "" && f.LeaderboardID != hubv1alpha1.ID(lb) {
		return apierr.BadRequest("leaderboard_id", "the file is for leaderboard %s, not %s", f.LeaderboardID, hubv1alpha1.ID(lb))
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
	return CheckToken("leaderboard "+Slug(lb), f.ExpectedUpdatedAt, lb)
}

// applyKeys sets the definition keys a file holds (has) on spec.
func applyKeys(spec *hubv1alpha1.LeaderboardSpec, f *BoardFile, has map[string]bool) error {
	from := SpecFromFile(f)
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
	inputs, err := c.rowInputs(ctx, lb, f, existing)
	if err != nil {
		return err
	}
	if err := c.ValidateRows(spec, inputs); err != nil {
		return err
	}
	for _, in := range inputs {
		if in.ID == "" {
			w := &write{obj: NewRow(lb, in.Spec, now), index: in.Index, what: fmt.Sprintf("rows[%d]", in.Index), row: true}
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

// rowInputs are the rows a rows file writes: a row with an id is that row of the board
// (refused when it is not, or when it changed since the file's token) merged with what
// the file gives; a row without one is new (at most MaxRowsPerRequest).
func (c *Client) rowInputs(ctx context.Context, lb *hubv1alpha1.Leaderboard, f *RowsFile, existing map[string]*hubv1alpha1.LeaderboardRow) ([]RowInput, error) {
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
			return nil, apierr.NotFound("rows[%d]: row %s is not a row of leaderboard %s", i, fr.ID, Slug(lb))
		}
		if fr.ExpectedUpdatedAt != "" {
			c.Settle(ctx, cur)
		}
		if err := CheckToken(fmt.Sprintf("rows[%d] (row %s)", i, fr.ID), fr.ExpectedUpdatedAt, cur); err != nil {
			return nil, err
		}
		inputs = append(inputs, RowInput{Index: i, ID: fr.ID, Spec: mergeRow(&cur.Spec, fr)})
	}
	if newRows > MaxRowsPerRequest {
		return nil, apierr.BadRequest("rows", "%d new rows; at most %d per request", newRows, MaxRowsPerRequest)
	}
	return inputs, nil
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
			if _, want := out[hubv1alpha1.ID(r)]; want {
				out[hubv1alpha1.ID(r)] = r
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
		if rewritten[hubv1alpha1.ID(r)] || len(c.ValidateFn(&lb.Spec, &r.Spec)) > 0 {
			continue
		}
		fields := c.ValidateFn(next, &r.Spec)
		if len(fields) == 0 {
			continue
		}
		details.add(InvalidRow{ID: hubv1alpha1.ID(r), Fields: fields})
	}
	return details.Err()
}
