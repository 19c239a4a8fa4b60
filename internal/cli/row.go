package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor"
)

func (a *app) rowCmd() *cobra.Command {
	row := &cobra.Command{Use: "row", Aliases: []string{"rows"}, Short: "Manage a leaderboard's rows", Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	row.AddCommand(a.rowCreateCmd(), a.rowListCmd(), a.rowShowCmd(), a.rowExportCmd(), a.rowUpdateCmd(), a.rowDeleteCmd(), a.rowHistoryCmd(), a.trialCmd())
	return row
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
