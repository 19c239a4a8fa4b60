package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) exportCmd() *cobra.Command {
	var output, format string
	var force bool
	c := &cobra.Command{
		Use:   "export <leaderboard> --output <file>",
		Short: "Export a leaderboard's definition (or, --format manifest, the board and rows as manifests)",
		Args:  exactArgs(1, "one leaderboard"),
		RunE: func(c *cobra.Command, args []string) error {
			if output == "" {
				return usagef("--output is required")
			}
			kind, fileFormat, err := hub.OutputFormat(output, format)
			if err != nil {
				return usageError{err}
			}
			cl, err := a.hub()
			if err != nil {
				return err
			}
			lb, err := cl.Board(a.ctx(c), args[0])
			if err != nil {
				return err
			}
			data, err := cl.ExportBoard(a.ctx(c), lb, kind, fileFormat)
			if err != nil {
				return err
			}
			if err := hub.WriteFile(output, data, force); err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]string{"leaderboard_id": string(lb.UID), "output": output, "format": string(kind), "expected_updated_at": hub.UpdatedAt(lb)})
			}
			fmt.Fprintf(a.stdout, "Exported %s to %s\n", hub.Slug(lb), output)
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&output, "output", "o", "", "file to write (.yaml, .yml or .json)")
	f.StringVar(&format, "format", "", "yaml or json (default: by extension), or manifest")
	f.BoolVar(&force, "force", false, "overwrite an existing file")
	a.addJSON(c)
	return c
}
