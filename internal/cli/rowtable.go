package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor"
	"podium.dev/podium/internal/cli/hub"
)

// The one table of rows (`show`, `row list`): the board's own columns, showing each
// row's display values, between the columns a verb adds before and after them.

// rowColumn is a column of the row table that is not one of the board's.
type rowColumn struct {
	header string
	cell   func(r hub.RankedRow, j hub.RowJSON) string
}

var (
	rankColumn = rowColumn{"RANK", func(r hub.RankedRow, _ hub.RowJSON) string { return rankText(r.Rank) }}
	idColumn   = rowColumn{"ID", func(_ hub.RankedRow, j hub.RowJSON) string { return j.ID }}
	// statusColumn is the row's status; stateColumn adds whether its values are valid.
	statusColumn = rowColumn{"STATUS", func(_ hub.RankedRow, j hub.RowJSON) string { return j.Status }}
	stateColumn  = rowColumn{"STATUS", func(_ hub.RankedRow, j hub.RowJSON) string { return statusText(j) }}
	trialsColumn = rowColumn{"TRIALS", func(_ hub.RankedRow, j hub.RowJSON) string { return fmt.Sprint(j.NTrials) }}
)

// printRowTable prints rows of lb: the before columns, the board's columns, the after
// columns.
func (a *app) printRowTable(lb *hubv1alpha1.Leaderboard, rows []hub.RankedRow, before, after []rowColumn) error {
	var headers []string
	for _, c := range before {
		headers = append(headers, c.header)
	}
	for _, col := range lb.Spec.Columns {
		headers = append(headers, col.Header)
	}
	for _, c := range after {
		headers = append(headers, c.header)
	}
	t := a.newTable(headers...)
	for _, r := range rows {
		j := hub.RowToJSON(hubv1alpha1.ID(lb), r)
		var cells []string
		for _, c := range before {
			cells = append(cells, c.cell(r, j))
		}
		for _, col := range lb.Spec.Columns {
			cells = append(cells, cellValue(col, r.Row))
		}
		for _, c := range after {
			cells = append(cells, c.cell(r, j))
		}
		t.row(cells...)
	}
	return t.flush()
}

// cellValue renders the value a column shows for a row (its display accessor when
// set): text as is, numbers as written, links by label, missing values as "-".
func cellValue(col hubv1alpha1.Column, r *hubv1alpha1.LeaderboardRow) string {
	acc := col.Accessor
	if col.DisplayAccessor != "" {
		acc = col.DisplayAccessor
	}
	root, path, ok := accessor.Split(acc)
	if !ok {
		return "-"
	}
	raw := r.Spec.Metadata
	if root == accessor.Metrics {
		raw = r.Spec.Metrics
	}
	if raw == nil {
		return "-"
	}
	var obj map[string]any
	d := json.NewDecoder(strings.NewReader(string(raw.Raw)))
	d.UseNumber()
	if d.Decode(&obj) != nil {
		return "-"
	}
	v, found := accessor.LookupMap(obj, path)
	if !found || v == nil {
		return "-"
	}
	switch v := v.(type) {
	case string:
		return clip(v, 40)
	case map[string]any:
		if l, ok := v["label"].(string); ok {
			return clip(l, 40)
		}
		if u, ok := v["url"].(string); ok {
			return clip(u, 40)
		}
	}
	j, _ := json.Marshal(v)
	return clip(string(j), 40)
}

func rankText(rank int) string {
	if rank == 0 {
		return "-"
	}
	return fmt.Sprint(rank)
}

// statusText is a row's status, and whether its values are invalid or not validated yet.
func statusText(j hub.RowJSON) string {
	switch {
	case j.Valid == nil:
		return j.Status + " (pending)"
	case !*j.Valid:
		return j.Status + " (invalid)"
	}
	return j.Status
}

// clip shortens s to n characters for a table cell.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
