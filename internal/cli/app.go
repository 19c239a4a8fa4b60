package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"podium.dev/podium/internal/cli/hub"
)

// app is one run of the CLI: its streams, global flags and client.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	flags          hub.Options
	// json, quiet and noHeaders are the output flags of the command being run.
	json, quiet, noHeaders bool
	client                 *hub.Client
	// endpoint is --endpoint of the commands that talk to Podium's HTTP API.
	endpoint string
	// apiKeyFile is --api-key-file of those commands (apikey_client.go).
	apiKeyFile string
}

// options merges the global flags over what `auth login` recorded.
func (a *app) options() (hub.Options, error) {
	cfg, err := loadConfig()
	if err != nil {
		return hub.Options{}, err
	}
	o := a.flags
	if o.Kubeconfig == "" {
		o.Kubeconfig = cfg.Kubeconfig
	}
	if o.Context == "" && a.flags.Kubeconfig == "" {
		o.Context = cfg.Context
	}
	if o.Org == "" {
		o.Org = cfg.Org
	}
	return o, nil
}

// hub returns the client, connecting on first use.
func (a *app) hub() (*hub.Client, error) {
	if a.client != nil {
		return a.client, nil
	}
	o, err := a.options()
	if err != nil {
		return nil, err
	}
	c, err := hub.New(o)
	if err != nil {
		return nil, err
	}
	a.client = c
	return c, nil
}

func (a *app) ctx(c *cobra.Command) context.Context {
	if ctx := c.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// addOutputFlags adds --json (and, for lists, --quiet and --no-headers).
func (a *app) addJSON(c *cobra.Command) {
	c.Flags().BoolVar(&a.json, "json", false, "print JSON (errors as the error envelope on stderr)")
}

func (a *app) addListFlags(c *cobra.Command, quietWhat string) {
	c.Flags().BoolVarP(&a.quiet, "quiet", "q", false, "print only "+quietWhat+", one per line")
	c.Flags().BoolVar(&a.noHeaders, "no-headers", false, "omit table headers")
}

// printJSON writes v as indented JSON to stdout.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// isTerminal says whether a stream is an interactive terminal.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// table prints rows under headers (unless --no-headers), aligned.
type table struct {
	w       *tabwriter.Writer
	headers []string
	printed bool
	skipHdr bool
}

func (a *app) newTable(headers ...string) *table {
	return &table{w: tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0), headers: headers, skipHdr: a.noHeaders}
}

func (t *table) row(cells ...string) {
	if !t.printed && !t.skipHdr {
		fmt.Fprintln(t.w, strings.Join(t.headers, "\t"))
	}
	t.printed = true
	for i, c := range cells {
		cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() error {
	if !t.printed && !t.skipHdr {
		fmt.Fprintln(t.w, strings.Join(t.headers, "\t"))
	}
	return t.w.Flush()
}

// paging is --limit and --page of a list (docs/cli.md, Output).
type paging struct {
	limit, page int
	// pageSet is true when --page was given: then only that page is printed.
	pageSet bool
}

func (p *paging) add(c *cobra.Command) {
	c.Flags().IntVar(&p.limit, "limit", 50, "items per page (1-1000)")
	c.Flags().IntVar(&p.page, "page", 1, "page to print, from 1 (without it, quiet or piped output prints every page)")
}

// complete records whether --page was given.
func (p *paging) complete(c *cobra.Command) { p.pageSet = c.Flags().Changed("page") }

// validate checks --limit and --page; --page 0 is refused like any page below 1.
func (p *paging) validate() error {
	if p.limit < 1 || p.limit > 1000 {
		return usagef("--limit must be between 1 and 1000, not %d", p.limit)
	}
	if p.page < 1 {
		return usagef("--page starts at 1, not %d", p.page)
	}
	return nil
}

// Pagination is the JSON page description: the public read's paging fields
// (docs/http-api.md).
type Pagination struct {
	Total      int `json:"total"`
	Page       int `json:"page"`
	PageSize   int `json:"page_size"`
	TotalPages int `json:"total_pages"`
}

// listPage is the one --json shape of every list (leaderboards, rows, trial links):
// the page's items and the paging fields. It is defined here, for the CLI only; the
// read's wire types are docs/http-api.md's.
type listPage[T any] struct {
	Items      []T        `json:"items"`
	Pagination Pagination `json:"pagination"`
}

func newListPage[T any](items []T, pg Pagination) listPage[T] {
	if items == nil {
		items = []T{}
	}
	return listPage[T]{Items: items, Pagination: pg}
}

// window returns the slice bounds to print of n items: one page for --json or an
// explicit --page or a terminal; every item (all pages) for quiet or piped output.
func (a *app) window(p paging, n int) (lo, hi int, pg Pagination) {
	page := p.page
	pg = Pagination{Total: n, Page: page, PageSize: p.limit, TotalPages: (n + p.limit - 1) / p.limit}
	if !a.json && !p.pageSet && (a.quiet || !isTerminal(a.stdout)) {
		return 0, n, pg
	}
	lo = min((page-1)*p.limit, n)
	hi = min(lo+p.limit, n)
	return lo, hi, pg
}

// pageHint tells a person on a terminal that there are more pages.
func (a *app) pageHint(p paging, pg Pagination, what string) {
	if a.json || a.quiet || !isTerminal(a.stdout) || pg.TotalPages <= 1 {
		return
	}
	fmt.Fprintf(a.stderr, "Page %d of %d (%s); see more with --page %d\n", pg.Page, pg.TotalPages, count(pg.Total, what), min(pg.Page+1, pg.TotalPages))
}

// count writes n and a noun in the right number: "1 row", "2 rows".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
