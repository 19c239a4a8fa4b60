package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

func (a *app) listCmd() *cobra.Command {
	var p paging
	c := &cobra.Command{
		Use:     "list [<org>/<dataset> | <dataset-id>]",
		Aliases: []string{"ls"},
		Short:   "List leaderboards, optionally of one dataset",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("list takes at most one dataset (%d given)", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := p.check(c); err != nil {
				return err
			}
			cl, err := a.hub()
			if err != nil {
				return err
			}
			filter := ""
			if len(args) == 1 {
				filter = args[0]
			}
			boards, err := cl.Boards(a.ctx(c), filter)
			if err != nil {
				return err
			}
			slices.SortFunc(boards, func(x, y hubv1alpha1.Leaderboard) int { return strings.Compare(hub.Slug(&x), hub.Slug(&y)) })
			lo, hi, pg := a.window(p, len(boards))
			boards = boards[lo:hi]
			switch {
			case a.json:
				out := []hub.BoardJSON{}
				for i := range boards {
					out = append(out, hub.BoardToJSON(&boards[i]))
				}
				return a.printJSON(newListPage(out, pg))
			case a.quiet:
				for i := range boards {
					fmt.Fprintln(a.stdout, hub.Slug(&boards[i]))
				}
				return nil
			}
			t := a.newTable("SLUG", "ID", "TITLE", "VISIBILITY", "ROWS", "READY")
			for i := range boards {
				j := hub.BoardToJSON(&boards[i])
				t.row(hub.Slug(&boards[i]), j.ID, clip(j.Title, 40), j.Visibility, fmt.Sprint(j.Rows), readyText(j))
			}
			if err := t.flush(); err != nil {
				return err
			}
			a.pageHint(p, pg, "leaderboard")
			return nil
		},
	}
	p.add(c)
	a.addListFlags(c, "leaderboard slugs")
	return c
}

func readyText(j hub.BoardJSON) string {
	if j.Ready {
		return "True"
	}
	if j.Reason != "" {
		return "False (" + j.Reason + ")"
	}
	return "False"
}

// clip shortens s to n characters for a table cell.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
