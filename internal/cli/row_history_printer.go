package cli

import (
	"fmt"
	"strings"

	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/wire"
)

// print prints a row's changes, one line a changed field, or (--json) the history.
func (o *rowHistoryOptions) print(h wire.RowHistory) error {
	if o.json {
		return o.printJSON(h)
	}
	tb := o.newTable("WHEN", "BY", "FIELD", "OLD", "NEW")
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
}

// historyValue renders a recorded value for the table (rowhistory.Text), clipped.
func historyValue(v []byte, truncated bool) string {
	s := clip(rowhistory.Text(v, truncated), 40)
	if truncated && !strings.HasSuffix(s, "…") {
		s += "…"
	}
	return s
}
