package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// verbOptions is a verb of `podium hub leaderboard`, in a file of its own (lb_<verb>.go,
// row_<verb>.go) with its printer beside it (<file>_printer.go) where it prints more
// than a line, as kubectl's and kueuectl's commands are shaped:
//   - Complete takes the positional arguments and what only the command knows (which
//     flags were given);
//   - Validate refuses bad input as a usage error (exit 2) before any file is read or
//     the cluster is asked;
//   - Run does the work and prints it.
type verbOptions interface {
	Complete(c *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runVerb is the cobra RunE of a verb: Complete, Validate, Run.
func (a *app) runVerb(o verbOptions) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if err := o.Complete(c, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(a.ctx(c))
	}
}
