package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

// initOptions is `leaderboard init`: an example definition to edit and create.
type initOptions struct {
	*app
	cmd                      *cobra.Command
	pkg, name, title, format string
	outputFile
	// fileFormat is the output file's format, by its extension.
	fileFormat hub.Format
}

func (a *app) initCmd() *cobra.Command {
	return a.verb(&initOptions{app: a}, "hub leaderboard init", noArgs)
}

// addFlags adds the verb's own flags to c.
func (o *initOptions) addFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.pkg, "package", "", "dataset slug <org>/<dataset>")
	f.StringVar(&o.name, "name", "", "leaderboard slug")
	f.StringVar(&o.title, "title", "", "leaderboard title")
	f.StringVar(&o.format, "format", "", "yaml (default), json, or manifest")
	o.add(c, ".yaml, .yml or .json")
}

func (o *initOptions) Complete(c *cobra.Command, _ []string) error {
	o.cmd = c
	return nil
}

func (o *initOptions) Validate() error {
	if err := requireFlags(o.cmd, "package", "name", "title", "output"); err != nil {
		return err
	}
	if org, ds, ok := strings.Cut(o.pkg, "/"); !ok || org == "" || ds == "" || strings.Contains(ds, "/") {
		return usagef("--package must be <org>/<dataset>, not %q", o.pkg)
	}
	switch o.format {
	case "", "yaml", "json", "manifest":
	default:
		return usagef("--format must be yaml, json or manifest, not %q", o.format)
	}
	ext, err := hub.FormatOf(o.output)
	if err != nil {
		return usageError{err}
	}
	o.fileFormat = ext
	if (o.format == "yaml" || o.format == "json") && hub.Format(o.format) != ext {
		return usagef("--format %s does not match the extension of %s", o.format, o.output)
	}
	return nil
}

func (o *initOptions) Run(context.Context) error {
	var data []byte
	var err error
	if o.format == "manifest" {
		data, err = hub.InitManifest(o.pkg, o.name, o.title, o.fileFormat)
	} else {
		data, err = hub.Marshal(hub.InitFile(o.pkg, o.name, o.title), o.fileFormat)
	}
	if err != nil {
		return err
	}
	if err := o.write(data); err != nil {
		return err
	}
	if o.json {
		format := o.fileFormat
		if o.format != "" {
			format = hub.Format(o.format)
		}
		return o.printJSON(map[string]string{"output": o.output, "format": string(format)})
	}
	fmt.Fprintf(o.stdout, "Wrote %s; edit it, then run: podium hub leaderboard create --config %s\n", o.output, o.output)
	return nil
}
