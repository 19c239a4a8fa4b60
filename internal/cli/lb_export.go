package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// exportOptions is `leaderboard export`: the definition as a file to edit and apply,
// or the board and its rows as manifests.
type exportOptions struct {
	*app
	oneArg
	outputFile
	format string
	// kind is what is written (a definition file or manifests), fileFormat its format.
	kind, fileFormat hub.Format
}

func (a *app) exportCmd() *cobra.Command {
	return a.verb(&exportOptions{app: a}, "hub leaderboard export", exactArgs(1, "one leaderboard"))
}

// addFlags adds the verb's own flags to c.
func (o *exportOptions) addFlags(c *cobra.Command) {
	o.add(c, ".yaml, .yml or .json")
	c.Flags().StringVar(&o.format, "format", "", "yaml or json (default: by extension), or manifest")
}

func (o *exportOptions) Validate() error {
	if err := o.required(); err != nil {
		return err
	}
	var err error
	if o.kind, o.fileFormat, err = hub.OutputFormat(o.output, o.format); err != nil {
		return usageError{err}
	}
	return nil
}

func (o *exportOptions) Run(ctx context.Context) error {
	cl, lb, err := o.board(ctx, o.arg)
	if err != nil {
		return err
	}
	// The token written is the updated_at the read serves from now on.
	cl.Settle(ctx, lb)
	data, err := cl.ExportBoard(ctx, lb, o.kind, o.fileFormat)
	if err != nil {
		return err
	}
	if err := o.write(data); err != nil {
		return err
	}
	if o.json {
		return o.printJSON(map[string]string{"leaderboard_id": hubv1alpha1.ID(lb), "output": o.output, "format": string(o.kind), "expected_updated_at": hub.UpdatedAt(lb)})
	}
	fmt.Fprintf(o.stdout, "Exported %s to %s\n", hub.Slug(lb), o.output)
	return nil
}
