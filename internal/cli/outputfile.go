package cli

import (
	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

// outputFile is --output and --force of the verbs that write a file (init, export, row
// export).
type outputFile struct {
	output string
	force  bool
}

// add adds the flags; what says which files --output takes.
func (f *outputFile) add(c *cobra.Command, what string) {
	c.Flags().StringVarP(&f.output, "output", "o", "", "file to write ("+what+")")
	c.Flags().BoolVar(&f.force, "force", false, "overwrite an existing file")
}

// required refuses a verb without --output.
func (f *outputFile) required() error {
	if f.output == "" {
		return usagef("--output is required")
	}
	return nil
}

// write writes data to the file, refusing to overwrite one without --force.
func (f *outputFile) write(data []byte) error { return hub.WriteFile(f.output, data, f.force) }
