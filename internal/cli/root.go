// Package cli is the podium command-line client: a thin cobra layer over a client of
// the Kubernetes API (package hub). Each verb lives in its own file; this one holds
// the root command, the global flags and the exit codes.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/apierr"
)

// Version is set at build time.
var Version = "dev"

// usageError marks errors that exit with code 2.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Execute runs the CLI and returns its exit code: 0 success, 1 failure, 2 usage error.
// Errors go to stderr: a line for people, the error envelope with --json.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := a.newRoot()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ue usageError
	usage := errors.As(err, &ue)
	if a.json {
		e := apierr.As(err)
		if e.Code == apierr.CodeInternal {
			var ae *apierr.Error
			if !errors.As(err, &ae) {
				// Errors of our own making (flags, files) are not internal: keep the text.
				e = apierr.New(http.StatusBadRequest, apierr.CodeBadRequest, "%s", err.Error())
			}
		}
		enc := json.NewEncoder(stderr)
		enc.SetIndent("", "  ")
		_ = enc.Encode(apierr.Envelope{Error: e})
	} else {
		fmt.Fprintln(stderr, "Error:", errorText(err))
		if usage {
			fmt.Fprintln(stderr, "Run 'podium --help' or add --help to the command for usage.")
		}
	}
	if usage {
		return 2
	}
	return 1
}

// errorText is an error for people: the envelope's message (the code only when it
// adds something).
func errorText(err error) string {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case apierr.CodeStale, apierr.CodeConflict, apierr.CodeRowsInvalid, apierr.CodeForbidden,
			apierr.CodeReplacementRequired, apierr.CodeReplacementStale, apierr.CodeLimitReached:
			return ae.Message + " [" + ae.Code + "]"
		}
		return ae.Message
	}
	return err.Error()
}

func (a *app) newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "podium",
		Short:         "Podium: hosted secrets and evaluation leaderboards",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.flags.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: the one recorded by auth login, else KUBECONFIG or ~/.kube/config)")
	pf.StringVar(&a.flags.Context, "context", "", "kubeconfig context to use")
	pf.StringVar(&a.flags.Org, "org", "", "organization (namespace) to work in")
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  noArgs,
		Run:   func(c *cobra.Command, _ []string) { fmt.Fprintln(c.OutOrStdout(), "podium", Version) },
	})
	root.AddCommand(a.authCmd())
	hubCmd := &cobra.Command{Use: "hub", Short: "Work with the hub: leaderboards of datasets, hosted secrets, registry credentials"}
	lb := &cobra.Command{Use: "leaderboard", Aliases: []string{"leaderboards", "lb"}, Short: "Manage leaderboards and their rows"}
	lb.AddCommand(a.listCmd(), a.showCmd(), a.initCmd(), a.createCmd(), a.updateCmd(), a.exportCmd(), a.rowCmd())
	hubCmd.AddCommand(lb, a.secretsCmd(), a.registryCmd())
	root.AddCommand(hubCmd)
	for _, c := range []*cobra.Command{root, hubCmd, lb} {
		if c.Args == nil && c.RunE == nil {
			c.Args = noArgs
			c.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
		}
	}
	return root
}

// args checks the positional arguments, as a usage error.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (%d given)", c.CommandPath(), names, len(args))
		}
		return nil
	}
}

// noArgs refuses arguments; on a command with subcommands an argument is a mistyped
// subcommand, so the error suggests the nearest ones (as cobra does for the root).
func noArgs(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply
	}
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + quoteList(s) + "?"
	}
	return usageError{errors.New(msg)}
}

// quoteList writes names as "a", "b" or "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// requireFlags refuses a command whose required flags are missing (or empty), naming
// every one of them, not only the first.
func requireFlags(c *cobra.Command, names ...string) error {
	var missing []string
	for _, n := range names {
		if f := c.Flags().Lookup(n); f == nil || f.Value.String() == "" {
			missing = append(missing, "--"+n)
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return usagef("%s is required", missing[0])
	}
	return usagef("%s and %s are required", strings.Join(missing[:len(missing)-1], ", "), missing[len(missing)-1])
}
