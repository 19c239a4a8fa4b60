package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// verbOptions is a verb of the CLI, in a file of its own (lb_<verb>.go, row_<verb>.go,
// secrets_<verb>.go) with its printer beside it (<file>_printer.go) where it prints more
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

// flagged is a verb with flags of its own, which it adds to its command.
type flagged interface {
	addFlags(c *cobra.Command)
}

// paged is a list verb that takes --limit and --page (listArgs).
type paged interface {
	pages() *paging
}

// verb is the command of the verb at path (below podium): its use line and help from
// help.md, args checking its positional arguments, running o, with --json and o's own
// flags.
func (a *app) verb(o verbOptions, path string, args cobra.PositionalArgs) *cobra.Command {
	c := helpOf(path).command()
	c.Args, c.RunE = args, a.runVerb(o)
	a.addJSON(c)
	if f, ok := o.(flagged); ok {
		f.addFlags(c)
	}
	return c
}

// noInput is the Complete and Validate of a verb without arguments whose flags need no
// check.
type noInput struct{}

func (noInput) Complete(*cobra.Command, []string) error { return nil }

func (noInput) Validate() error { return nil }

// listVerb is the command of a list verb: verb's, with --quiet (printing quietWhat)
// and --no-headers, and --limit and --page when o is paged.
func (a *app) listVerb(o verbOptions, quietWhat, path string, args cobra.PositionalArgs) *cobra.Command {
	c := a.verb(o, path, args)
	if p, ok := o.(paged); ok {
		p.pages().add(c)
	}
	a.addListFlags(c, quietWhat)
	return c
}

// oneArg is the Complete of a verb of one positional argument (a leaderboard, a row id,
// an environment variable name): it records it. A verb that checks nothing more takes
// its Validate too.
type oneArg struct{ arg string }

func (o *oneArg) Complete(_ *cobra.Command, args []string) error {
	o.arg = args[0]
	return nil
}

func (*oneArg) Validate() error { return nil }

// listArgs is the Complete and Validate of a list verb: its positional argument when it
// takes one, and --limit and --page.
type listArgs struct {
	arg    string
	paging paging
}

func (o *listArgs) Complete(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		o.arg = args[0]
	}
	o.paging.complete(c)
	return nil
}

func (o *listArgs) Validate() error { return o.paging.validate() }

func (o *listArgs) pages() *paging { return &o.paging }
