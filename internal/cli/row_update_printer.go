package cli

import (
	"fmt"
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// print says which fields of the row changed, or (--json) prints the row and them.
func (o *rowUpdateOptions) print(row *hubv1alpha1.LeaderboardRow, fields []string) error {
	if o.json {
		if fields == nil {
			fields = []string{}
		}
		return o.printJSON(map[string]any{"row": hub.RowToJSON("", hub.RankedRow{Row: row}), "changed_fields": fields})
	}
	if len(fields) == 0 {
		fmt.Fprintf(o.stdout, "No changes to row %s\n", hubv1alpha1.ID(row))
		return nil
	}
	fmt.Fprintf(o.stdout, "Updated row %s: %s\n", hubv1alpha1.ID(row), strings.Join(fields, ", "))
	return nil
}
