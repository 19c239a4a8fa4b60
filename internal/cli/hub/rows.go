package hub

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/ranking"
)

// CreateRows adds 1-500 new rows to a board, concurrently and all or nothing: the
// rows are validated first (status, trial ids unique across the request, the board's
// schemas); if a write fails, the rows already created are deleted.
func (c *Client) CreateRows(ctx context.Context, lb *hubv1alpha1.Leaderboard, f *RowsFile) ([]*hubv1alpha1.LeaderboardRow, error) {
	if n := len(f.Rows); n < 1 || n > MaxRowsPerRequest {
		return nil, apierr.BadRequest("rows", "%d rows; a request adds 1 to %d rows", n, MaxRowsPerRequest)
	}
	if f.ExpectedUpdatedAt != "" {
		c.Settle(ctx, lb)
	}
	if err := checkRowsFileTarget(lb, f); err != nil {
		return nil, err
	}
	var inputs []RowInput
	for i := range f.Rows {
		if f.Rows[i].ID != "" {
			return nil, apierr.BadRequest(fmt.Sprintf("rows[%d].id", i), "row create adds new rows; apply an exported rows file with `leaderboard update --rows`")
		}
		inputs = append(inputs, RowInput{Index: i, Spec: RowSpecFromFile(lb.Name, &f.Rows[i])})
	}
	if err := c.ValidateRows(&lb.Spec, inputs); err != nil {
		return nil, err
	}
	now := time.Now()
	p := &plan{}
	for _, in := range inputs {
		p.rows = append(p.rows, &write{obj: NewRow(lb, in.Spec, now), index: in.Index, what: fmt.Sprintf("rows[%d]", in.Index), row: true})
	}
	// No dry-run pass: the rows were validated above, and a failed write deletes what
	// was created, so one round trip per row (plus its id label) suffices.
	if err := c.execute(ctx, p, false); err != nil {
		return nil, err
	}
	c.awaitNewRowIDs(ctx, lb, p)
	out := make([]*hubv1alpha1.LeaderboardRow, len(p.rows))
	for i, w := range p.rows {
		out[i] = w.obj.(*hubv1alpha1.LeaderboardRow)
	}
	return out, nil
}

// RankedRow is a row with its rank, rank range and interval as the read serves them
// (Rank 0 when it is not ranked: hidden, invalid, or not yet validated by the
// controller).
type RankedRow = ranking.Entry

// Ranked orders a board's rows as the server ranks them (ranking.Sort over the rows
// that are shown and valid), followed by the unranked rows in creation order.
func Ranked(lb *hubv1alpha1.Leaderboard, rows []hubv1alpha1.LeaderboardRow) []RankedRow {
	var eligible []*hubv1alpha1.LeaderboardRow
	var rest []*hubv1alpha1.LeaderboardRow
	for i := range rows {
		if ranking.Ranked(&rows[i]) {
			eligible = append(eligible, &rows[i])
		} else {
			rest = append(rest, &rows[i])
		}
	}
	out := ranking.Sort(lb.Spec.RankBy, eligible)
	slices.SortStableFunc(rest, byCreation)
	for _, r := range rest {
		out = append(out, RankedRow{Row: r})
	}
	return out
}

func byCreation(a, b *hubv1alpha1.LeaderboardRow) int {
	if c := hubv1alpha1.CreatedAt(a).Compare(hubv1alpha1.CreatedAt(b).Time); c != 0 {
		return c
	}
	return strings.Compare(hubv1alpha1.ID(a), hubv1alpha1.ID(b))
}

func sortByCreation(rows []hubv1alpha1.LeaderboardRow) {
	slices.SortStableFunc(rows, func(a, b hubv1alpha1.LeaderboardRow) int { return byCreation(&a, &b) })
}

// RankOf returns a row with its rank on its board (0 when unranked) and rank range.
func (c *Client) RankOf(ctx context.Context, lb *hubv1alpha1.Leaderboard, row *hubv1alpha1.LeaderboardRow) (RankedRow, error) {
	if !ranking.Ranked(row) {
		return RankedRow{Row: row}, nil
	}
	rows, err := c.BoardRows(ctx, lb)
	if err != nil {
		return RankedRow{}, err
	}
	for _, r := range Ranked(lb, rows) {
		if r.Row.UID == row.UID {
			return r, nil
		}
	}
	return RankedRow{Row: row}, nil
}

// UpdateRow changes one row from a one-row file and/or a status flag (the flag wins).
// A file's leaderboard_id, id and expected_updated_at are checked; what the file
// omits is kept.
func (c *Client) UpdateRow(ctx context.Context, row *hubv1alpha1.LeaderboardRow, f *RowFile, status string) (*hubv1alpha1.LeaderboardRow, []string, error) {
	lb, err := c.BoardOf(ctx, row)
	if err != nil {
		return nil, nil, err
	}
	spec := *row.Spec.DeepCopy()
	if f != nil {
		if f.LeaderboardID != "" && f.LeaderboardID != hubv1alpha1.ID(lb) {
			return nil, nil, apierr.BadRequest("leaderboard_id", "the file is for leaderboard %s, not %s", f.LeaderboardID, hubv1alpha1.ID(lb))
		}
		if f.ID != "" && !strings.EqualFold(f.ID, hubv1alpha1.ID(row)) {
			return nil, nil, apierr.BadRequest("id", "the file is for row %s, not %s", f.ID, hubv1alpha1.ID(row))
		}
		if f.ExpectedUpdatedAt != "" {
			c.Settle(ctx, row)
		}
		if err := CheckToken("row "+hubv1alpha1.ID(row), f.ExpectedUpdatedAt, row); err != nil {
			return nil, nil, err
		}
		spec = mergeRow(&spec, f)
	}
	if status != "" {
		spec.Visibility = hubv1alpha1.RowVisibility(status)
	}
	if err := c.ValidateRows(&lb.Spec, []RowInput{{Index: 0, ID: hubv1alpha1.ID(row), Spec: spec}}); err != nil {
		ae := *apierr.As(err)
		ae.Message = strings.TrimPrefix(ae.Message, "rows[0]: ")
		return nil, nil, &ae
	}
	fields := rowDiff(&row.Spec, &spec)
	if len(fields) == 0 {
		return row, nil, nil
	}
	next := row.DeepCopy()
	next.Spec = spec
	touch(next, time.Now())
	if err := c.updateSpec(ctx, next, row.Generation); err != nil {
		return nil, nil, KubeError(err, "row "+hubv1alpha1.ID(row))
	}
	return next, fields, nil
}

// DeletedRows is what a delete did: the rows deleted, and, when a delete failed
// midway, the rows left in place.
type DeletedRows struct {
	Deleted    []string `json:"deleted"`
	NotDeleted []string `json:"not_deleted,omitempty"`
}

// DeleteRows deletes rows by id, all or nothing as far as Kubernetes allows. An id given
// twice counts once. Every id is found first, and every delete is sent as a server-side
// dry-run (permissions, preconditions), so a typo or a row the caller may not delete
// deletes nothing. Then each row is deleted, conditioned on its uid. A deleted row
// cannot be brought back with its id, so if a delete still fails midway the error says
// exactly which rows were deleted and which were not (details: DeletedRows).
func (c *Client) DeleteRows(ctx context.Context, ids []string) ([]*hubv1alpha1.LeaderboardRow, error) {
	ids = Dedupe(ids)
	rows := make([]*hubv1alpha1.LeaderboardRow, len(ids))
	errs := parallel(ctx, c.workers, len(ids), func(ctx context.Context, i int) error {
		r, err := c.Row(ctx, ids[i])
		rows[i] = r
		return err
	})
	if _, err := firstError(errs); err != nil {
		ae := *apierr.As(err)
		ae.Message += "; nothing was deleted"
		return nil, &ae
	}
	deleted := make([]bool, len(rows))
	del := func(dry bool) []error {
		return parallel(ctx, c.workers, len(rows), func(ctx context.Context, i int) error {
			uid := rows[i].UID
			opts := []client.DeleteOption{client.Preconditions{UID: &uid}}
			if dry {
				opts = append(opts, client.DryRunAll)
			}
			err := c.c.Delete(ctx, rows[i], opts...)
			if !dry && apierrors.IsNotFound(err) {
				err = nil // deleted meanwhile by someone else: gone, as asked
			}
			if err != nil {
				return KubeError(err, "row "+string(uid))
			}
			deleted[i] = !dry
			return nil
		})
	}
	if _, err := firstError(del(true)); err != nil {
		ae := *apierr.As(err)
		ae.Message += "; nothing was deleted"
		return nil, &ae
	}
	errs = del(false)
	if _, err := firstError(errs); err != nil {
		var res DeletedRows
		for i := range rows {
			if deleted[i] {
				res.Deleted = append(res.Deleted, hubv1alpha1.ID(rows[i]))
			} else {
				res.NotDeleted = append(res.NotDeleted, hubv1alpha1.ID(rows[i]))
			}
		}
		ae := *apierr.As(err)
		if len(res.Deleted) == 0 {
			ae.Message += "; nothing was deleted"
		} else {
			ae.Message += fmt.Sprintf("; deleted %s, not deleted %s", strings.Join(res.Deleted, ", "), strings.Join(res.NotDeleted, ", "))
		}
		ae.Details = res
		return nil, &ae
	}
	return rows, nil
}

// TrialOp changes a row's trial links.
type TrialOp int

const (
	TrialsSet TrialOp = iota
	TrialsAdd
	TrialsRemove
)

// ChangeTrials sets, adds or removes trial links of a row. It rereads and retries when
// the row changed meanwhile: the operation means the same on the newer row. A trial id
// given twice is refused (see DuplicateTrialID).
func (c *Client) ChangeTrials(ctx context.Context, row *hubv1alpha1.LeaderboardRow, op TrialOp, ids []string) (*hubv1alpha1.LeaderboardRow, error) {
	for i, id := range ids {
		if !hubv1alpha1.IsUUID(id) {
			return nil, apierr.BadRequest(fmt.Sprintf("trial_ids[%d]", i), "%q is not a UUID", id)
		}
	}
	if i, j := DuplicateTrialID(ids); j >= 0 {
		return nil, apierr.BadRequest(fmt.Sprintf("trial_ids[%d]", j), "trial %s is given twice (also trial_ids[%d])", ids[j], i)
	}
	want := ids
	cur := row
	for attempt := 0; ; attempt++ {
		next := cur.DeepCopy()
		switch op {
		case TrialsSet:
			next.Spec.TrialIDs = want
		case TrialsAdd:
			next.Spec.TrialIDs = Dedupe(append(append([]string{}, cur.Spec.TrialIDs...), want...))
		case TrialsRemove:
			next.Spec.TrialIDs = slices.DeleteFunc(append([]string{}, cur.Spec.TrialIDs...), func(t string) bool {
				return slices.ContainsFunc(want, func(w string) bool { return strings.EqualFold(w, t) })
			})
		}
		if len(next.Spec.TrialIDs) == 0 {
			next.Spec.TrialIDs = nil
		}
		if slices.Equal(next.Spec.TrialIDs, cur.Spec.TrialIDs) {
			return cur, nil
		}
		touch(next, time.Now())
		err := c.c.Update(ctx, next)
		if err == nil {
			return next, nil
		}
		if !isConflict(err) || attempt == 4 {
			return nil, KubeError(err, "row "+hubv1alpha1.ID(row))
		}
		fresh := &hubv1alpha1.LeaderboardRow{}
		if err := c.c.Get(ctx, client.ObjectKeyFromObject(row), fresh); err != nil {
			return nil, KubeError(err, "row "+hubv1alpha1.ID(row))
		}
		cur = fresh
	}
}

// DuplicateTrialID returns the positions of the first id given twice
// (case-insensitively), or -1, -1.
func DuplicateTrialID(ids []string) (first, again int) {
	seen := map[string]int{}
	for j, id := range ids {
		k := strings.ToLower(id)
		if i, dup := seen[k]; dup {
			return i, j
		}
		seen[k] = j
	}
	return -1, -1
}

// Dedupe keeps the first of each id (case-insensitively), in order.
func Dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		k := strings.ToLower(id)
		if !seen[k] {
			seen[k] = true
			out = append(out, id)
		}
	}
	return out
}

// RowsExport is a board's rows as `row export --all` writes them: the board's identity
// and every row with its id and expected_updated_at, ready for `update --rows`.
func RowsExport(lb *hubv1alpha1.Leaderboard, rows []hubv1alpha1.LeaderboardRow) RowsFile {
	f := RowsFile{LeaderboardID: hubv1alpha1.ID(lb), Package: cmp.Or(lb.Spec.Package, lb.Status.Package), Name: lb.Spec.Name, Rows: []RowFile{}}
	sortByCreation(rows)
	for i := range rows {
		f.Rows = append(f.Rows, RowFileFromObject(&rows[i]))
	}
	return f
}

// RowExport is one row as `row export <row-id>` writes it, ready for `row update
// --config`.
func RowExport(lb *hubv1alpha1.Leaderboard, row *hubv1alpha1.LeaderboardRow) RowFile {
	f := RowFileFromObject(row)
	f.LeaderboardID = hubv1alpha1.ID(lb)
	return f
}

// checkRowsFileTarget refuses a rows file that names another board (an exported rows
// file carries its board's leaderboard_id, package and name), or whose board changed
// since it was exported (Harbor's rows export carries the board's expected_updated_at).
func checkRowsFileTarget(lb *hubv1alpha1.Leaderboard, f *RowsFile) error {
	if f.LeaderboardID != "" && !strings.EqualFold(f.LeaderboardID, hubv1alpha1.ID(lb)) {
		return apierr.BadRequest("leaderboard_id", "the rows file is for leaderboard %s, not %s (%s)", f.LeaderboardID, hubv1alpha1.ID(lb), Slug(lb))
	}
	if pkg := cmp.Or(lb.Spec.Package, lb.Status.Package); f.Package != "" && f.Package != pkg {
		return apierr.BadRequest("package", "the rows file is for package %s, not %s (%s)", f.Package, pkg, Slug(lb))
	}
	if f.Name != "" && f.Name != lb.Spec.Name {
		return apierr.BadRequest("name", "the rows file is for leaderboard %q, not %q (%s)", f.Name, lb.Spec.Name, Slug(lb))
	}
	return CheckToken("leaderboard "+Slug(lb), f.ExpectedUpdatedAt, lb)
}

// TrialLink is one linked trial as trial lists print it: its id and when it was
// linked (null when the controller has not recorded it yet).
type TrialLink struct {
	TrialID  string  `json:"trial_id"`
	LinkedAt *string `json:"linked_at"`
}

// TrialLinks lists a row's trial links in the row's order, with the link times the
// row controller records in status.trialLinks.
func TrialLinks(row *hubv1alpha1.LeaderboardRow) []TrialLink {
	at := map[string]string{}
	for _, g := range row.Status.TrialLinks {
		for _, id := range g.TrialIDs {
			at[strings.ToLower(id)] = g.LinkedAt.UTC().Format(time.RFC3339)
		}
	}
	out := make([]TrialLink, 0, len(row.Spec.TrialIDs))
	for _, id := range row.Spec.TrialIDs {
		l := TrialLink{TrialID: id}
		if t, ok := at[strings.ToLower(id)]; ok {
			l.LinkedAt = &t
		}
		out = append(out, l)
	}
	return out
}
