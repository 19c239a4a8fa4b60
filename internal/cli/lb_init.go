package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) initCmd() *cobra.Command {
	var pkg, name, title, output, format string
	var force bool
	c := &cobra.Command{
		Use:   "init --package <org>/<dataset> --name <name> --title <title> --output <file>",
		Short: "Write an example leaderboard definition to edit and create",
		Long: "Writes an example definition: an agent metadata column (text, metadata.agent) and a\n" +
			"reward metrics column (number, metrics.reward), ranked by metrics.reward desc, nulls last.\n" +
			"YAML by default; --format json, or --format manifest for a Kubernetes manifest to commit.",
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := requireFlags(c, "package", "name", "title", "output"); err != nil {
				return err
			}
			if org, ds, ok := strings.Cut(pkg, "/"); !ok || org == "" || ds == "" || strings.Contains(ds, "/") {
				return usagef("--package must be <org>/<dataset>, not %q", pkg)
			}
			var fileFormat hub.Format
			var data []byte
			var err error
			switch format {
			case "", "yaml", "json", "manifest":
			default:
				return usagef("--format must be yaml, json or manifest, not %q", format)
			}
			ext, err := hub.FormatOf(output)
			if err != nil {
				return usageError{err}
			}
			fileFormat = ext
			if format == "yaml" || format == "json" {
				if hub.Format(format) != ext {
					return usagef("--format %s does not match the extension of %s", format, output)
				}
			}
			if format == "manifest" {
				data, err = hub.InitManifest(pkg, name, title, fileFormat)
			} else {
				data, err = hub.Marshal(hub.InitFile(pkg, name, title), fileFormat)
			}
			if err != nil {
				return err
			}
			if err := hub.WriteFile(output, data, force); err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]string{"output": output, "format": string(firstFormat(format, fileFormat))})
			}
			fmt.Fprintf(a.stdout, "Wrote %s; edit it, then run: podium hub leaderboard create --config %s\n", output, output)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&pkg, "package", "", "dataset slug <org>/<dataset>")
	f.StringVar(&name, "name", "", "leaderboard slug")
	f.StringVar(&title, "title", "", "leaderboard title")
	f.StringVarP(&output, "output", "o", "", "file to write (.yaml, .yml or .json)")
	f.StringVar(&format, "format", "", "yaml (default), json, or manifest")
	f.BoolVar(&force, "force", false, "overwrite an existing file")
	a.addJSON(c)
	return c
}

func firstFormat(flag string, f hub.Format) hub.Format {
	if flag != "" {
		return hub.Format(flag)
	}
	return f
}
