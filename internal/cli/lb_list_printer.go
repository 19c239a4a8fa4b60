package cli

import (
	"fmt"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// print prints the page of leaderboards asked for: a table, their slugs (--quiet), or
// the list page (--json).
func (o *listOptions) print(boards []hubv1alpha1.Leaderboard) error {
	items := make([]listedBoard, len(boards))
	for i := range boards {
		items[i] = listedBoard{hub.Slug(&boards[i]), hub.BoardToJSON(&boards[i])}
	}
	return printList(o.app, o.paging, items, list[listedBoard]{
		noun:    "leaderboard",
		id:      func(b listedBoard) string { return b.slug },
		json:    func(b listedBoard) any { return b.BoardJSON },
		columns: boardColumns,
	})
}

// listedBoard is a board as its list prints it.
type listedBoard struct {
	slug string
	hub.BoardJSON
}

var boardColumns = []column[listedBoard]{
	{"SLUG", func(b listedBoard) string { return b.slug }},
	{"ID", func(b listedBoard) string { return b.ID }},
	{"TITLE", func(b listedBoard) string { return clip(b.Title, 40) }},
	{"VISIBILITY", func(b listedBoard) string { return b.Visibility }},
	{"ROWS", func(b listedBoard) string { return fmt.Sprint(b.Rows) }},
	{"READY", func(b listedBoard) string { return readyText(b.BoardJSON) }},
}

// readyText is a board's Ready condition, with the reason when it is not.
func readyText(j hub.BoardJSON) string {
	if j.Ready {
		return "True"
	}
	if j.Reason != "" {
		return "False (" + j.Reason + ")"
	}
	return "False"
}
