package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/rowhistory"
)

func (a *app) rowHistoryCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "history <row-id>",
		Short: "Show who changed a row's values, when, and from what to what (newest first)",
		Long: "Show a row's change history, newest first: one line per changed field, with the\n" +
			"time, the Kubernetes user, and the old and new values (\"-\" when the field did not\n" +
			"exist; a value cut to 256 bytes or clipped for the table ends in \"…\"). A row\n" +
			"keeps its last 10 changes (docs/leaderboards.md, \"Change history\").",
		Args: exactArgs(1, "one row id"),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.hub()
			if err != nil {
				return err
			}
			row, err := cl.Row(a.ctx(c), args[0])
			if err != nil {
				return err
			}
			lb, err := cl.BoardOf(a.ctx(c), row)
			if err != nil {
				return err
			}
			// The CLI's users read the row with their own Kubernetes rights: members, who
			// see user names on every board.
			h := rowhistory.Served(string(lb.UID), row, true)
			if a.json {
				return a.printJSON(h)
			}
			tb := a.newTable("WHEN", "BY", "FIELD", "OLD", "NEW")
			for _, ch := range h.Changes {
				by := "-"
				if ch.By != nil {
					by = *ch.By
				}
				for _, f := range ch.Fields {
					tb.row(ch.At, by, f.Field, historyValue(f.Old, f.OldTruncated), historyValue(f.New, f.NewTruncated))
				}
				if ch.OmittedFields > 0 {
					tb.row(ch.At, by, fmt.Sprintf("(%d more fields)", ch.OmittedFields), "", "")
				}
			}
			return tb.flush()
		},
	}
	a.addJSON(c)
	return c
}

// historyValue renders a recorded value for the table (rowhistory.Text), clipped.
func historyValue(v []byte, truncated bool) string {
	s := clip(rowhistory.Text(v, truncated), 40)
	if truncated && !strings.HasSuffix(s, "…") {
		s += "…"
	}
	return s
}
