package hub

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

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
		p.rows = append(p.rows, &write{obj: newRow(lb, in.Spec, now), index: in.Index, what: fmt.Sprintf("rows[%d]", in.Index), labelLater: true})
	}
	// No dry-run pass: the rows were validated above, and a failed write deletes what
	// was created, so one round trip per row (plus its id label) suffices.
	if err := c.execute(ctx, p, false); err != nil {
		return nil, err
	}
	c.labelNewRows(ctx, lb, p)
	out := make([]*hubv1alpha1.LeaderboardRow, len(p.rows))
	for i, w := range p.rows {
		out[i] = w.obj.(*hubv1alpha1.LeaderboardRow)
	}
	return out, nil
}

// RankedRow is a row with its rank (0 when it is not ranked: hidden, invalid, or not
// yet validated by the controller).
type RankedRow struct {
	Rank int
	Row  *hubv1alpha1.LeaderboardRow
}

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
	out := make([]RankedRow, 0, len(rows))
	for _, e := range ranking.Sort(lb.Spec.RankBy, eligible) {
		out = append(out, RankedRow{Rank: e.Rank, Row: e.Row})
	}
	slices.SortStableFunc(rest, byCreation)
	for _, r := range rest {
		out = append(out, RankedRow{Row: r})
	}
	return out
}

func byCreation(a, b *hubv1alpha1.LeaderboardRow) int {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return strings.Compare(string(a.UID), string(b.UID))
}

func sortByCreation(rows []hubv1alpha1.LeaderboardRow) {
	slices.SortStableFunc(rows, func(a, b hubv1alpha1.LeaderboardRow) int { return byCreation(&a, &b) })
}

// RankOf returns a row's rank on its board (0 when unranked).
func (c *Client) RankOf(ctx context.Context, lb *hubv1alpha1.Leaderboard, row *hubv1alpha1.LeaderboardRow) (int, error) {
	if !ranking.Ranked(row) {
		return 0, nil
	}
	rows, err := c.BoardRows(ctx, lb)
	if err != nil {
		return 0, err
	}
	for _, r := range Ranked(lb, rows) {
		if r.Row.UID == row.UID {
			return r.Rank, nil
		}
	}
	return 0, nil
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
		if f.LeaderboardID != "" && f.LeaderboardID != string(lb.UID) {
			return nil, nil, apierr.BadRequest("leaderboard_id", "the file is for leaderboard %s, not %s", f.LeaderboardID, lb.UID)
		}
		if f.ID != "" && !strings.EqualFold(f.ID, string(row.UID)) {
			return nil, nil, apierr.BadRequest("id", "the file is for row %s, not %s", f.ID, row.UID)
		}
		if f.ExpectedUpdatedAt != "" {
			if actual := UpdatedAt(row); actual != f.ExpectedUpdatedAt {
				return nil, nil, Stale("row "+string(row.UID), f.ExpectedUpdatedAt, actual)
			}
		}
		spec = mergeRow(&spec, f)
	}
	if status != "" {
		spec.Visibility = hubv1alpha1.RowVisibility(status)
	}
	if err := c.ValidateRows(&lb.Spec, []RowInput{{Index: 0, ID: string(row.UID), Spec: spec}}); err != nil {
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
		return nil, nil, KubeError(err, "row "+string(row.UID))
	}
	return next, fields, nil
}

// DeleteRows deletes rows by id. Every id is found first, so a typo deletes nothing;
// each delete is conditioned on the row's uid.
func (c *Client) DeleteRows(ctx context.Context, ids []string) ([]*hubv1alpha1.LeaderboardRow, error) {
	rows := make([]*hubv1alpha1.LeaderboardRow, len(ids))
	errs := parallel(ctx, c.workers, len(ids), func(ctx context.Context, i int) error {
		r, err := c.Row(ctx, ids[i])
		rows[i] = r
		return err
	})
	if _, err := firstError(errs); err != nil {
		return nil, err
	}
	errs = parallel(ctx, c.workers, len(rows), func(ctx context.Context, i int) error {
		uid := rows[i].UID
		if err := c.c.Delete(ctx, rows[i], client.Preconditions{UID: &uid}); err != nil {
			return KubeError(err, "row "+string(uid))
		}
		return nil
	})
	if n, err := firstError(errs); err != nil {
		ae := *apierr.As(err)
		ae.Message += fmt.Sprintf(" (%d of %d rows were not deleted)", n, len(rows))
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
// the row changed meanwhile: the operation means the same on the newer row.
func (c *Client) ChangeTrials(ctx context.Context, row *hubv1alpha1.LeaderboardRow, op TrialOp, ids []string) (*hubv1alpha1.LeaderboardRow, error) {
	for i, id := range ids {
		if !hubv1alpha1.IsUUID(id) {
			return nil, apierr.BadRequest(fmt.Sprintf("trial_ids[%d]", i), "%q is not a UUID", id)
		}
	}
	want := dedupe(ids)
	cur := row
	for attempt := 0; ; attempt++ {
		next := cur.DeepCopy()
		switch op {
		case TrialsSet:
			next.Spec.TrialIDs = want
		case TrialsAdd:
			next.Spec.TrialIDs = dedupe(append(append([]string{}, cur.Spec.TrialIDs...), want...))
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
			return nil, KubeError(err, "row "+string(row.UID))
		}
		fresh := &hubv1alpha1.LeaderboardRow{}
		if err := c.c.Get(ctx, client.ObjectKeyFromObject(row), fresh); err != nil {
			return nil, KubeError(err, "row "+string(row.UID))
		}
		cur = fresh
	}
}

// dedupe keeps the first of each id (case-insensitively), in order.
func dedupe(ids []string) []string {
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
	f := RowsFile{LeaderboardID: string(lb.UID), Package: cmp.Or(lb.Spec.Package, lb.Status.Package), Name: lb.Spec.Name, Rows: []RowFile{}}
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
	f.LeaderboardID = string(lb.UID)
	return f
}
