package cli

import (
	"fmt"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// print says how many rows were deleted, or (--json) which.
func (o *rowDeleteOptions) print(rows []*hubv1alpha1.LeaderboardRow) error {
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, hubv1alpha1.ID(r))
	}
	if o.json {
		return o.printJSON(map[string]any{"deleted": ids})
	}
	fmt.Fprintf(o.stdout, "Deleted %s\n", count(len(ids), "row"))
	return nil
}
