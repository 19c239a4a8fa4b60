package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) rowUpdateCmd() *cobra.Command {
	var config, status string
	c := &cobra.Command{
		Use:   "update <row-id> [--config <file>] [--status hide|display]",
		Short: "Change a row's metadata, metrics or status",
		Long: "--config takes a row file (what `row export <row-id>` writes, or just the fields to\n" +
			"change: metadata, metrics, status, trial_ids); what it omits is kept. --status wins over it.",
		Args: exactArgs(1, "one row id"),
		RunE: func(c *cobra.Command, args []string) error {
			if config == "" && status == "" {
				return usagef("give --config or --status")
			}
			if status != "" && status != "display" && status != "hide" {
				return usagef("--status must be display or hide, not %q", status)
			}
			var rf *hub.RowFile
			if config != "" {
				var err error
				if rf, err = hub.LoadRow(config); err != nil {
					return err
				}
			}
			cl, err := a.hub()
			if err != nil {
				return err
			}
			row, err := cl.Row(a.ctx(c), args[0])
			if err != nil {
				return err
			}
			next, fields, err := cl.UpdateRow(a.ctx(c), row, rf, status)
			if err != nil {
				return err
			}
			if a.json {
				if fields == nil {
					fields = []string{}
				}
				return a.printJSON(map[string]any{"row": hub.RowToJSON("", next, 0), "changed_fields": fields})
			}
			if len(fields) == 0 {
				fmt.Fprintf(a.stdout, "No changes to row %s\n", row.UID)
				return nil
			}
			fmt.Fprintf(a.stdout, "Updated row %s: %s\n", row.UID, strings.Join(fields, ", "))
			return nil
		},
	}
	c.Flags().StringVar(&config, "config", "", "row file (.yaml/.yml/.json)")
	c.Flags().StringVar(&status, "status", "", "display or hide")
	a.addJSON(c)
	return c
}
