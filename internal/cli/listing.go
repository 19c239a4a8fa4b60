package cli

import "fmt"

// The one way a list prints (docs/cli.md, Output): a page of items as the list page
// (--json), their ids (--quiet), or a table and, on a terminal, the page hint.

// column is a column of a table: its header and what a cell shows of an item.
type column[T any] struct {
	header string
	cell   func(T) string
}

// printTable prints items as a table of cols.
func printTable[T any](a *app, cols []column[T], items []T) error {
	headers := make([]string, len(cols))
	for i, c := range cols {
		headers[i] = c.header
	}
	t := a.newTable(headers...)
	for _, it := range items {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = c.cell(it)
		}
		t.row(cells...)
	}
	return t.flush()
}

// list is how a list verb prints its items.
type list[T any] struct {
	// noun is what the page hint counts ("row": "1 row", "2 rows").
	noun string
	// id is what --quiet prints of an item, one a line.
	id func(T) string
	// json is an item's --json form; nil prints the item itself.
	json func(T) any
	// columns are the table's, unless table prints it.
	columns []column[T]
	table   func(page []T) error
}

// printList prints the page of all that p asks for (every item for quiet or piped
// output, see window).
func printList[T any](a *app, p paging, all []T, l list[T]) error {
	lo, hi, pg := a.window(p, len(all))
	page := all[lo:hi]
	switch {
	case a.json:
		items := make([]any, 0, len(page))
		for _, it := range page {
			if l.json != nil {
				items = append(items, l.json(it))
			} else {
				items = append(items, it)
			}
		}
		return a.printJSON(newListPage(items, pg))
	case a.quiet:
		for _, it := range page {
			fmt.Fprintln(a.stdout, l.id(it))
		}
		return nil
	}
	table := l.table
	if table == nil {
		table = func(page []T) error { return printTable(a, l.columns, page) }
	}
	if err := table(page); err != nil {
		return err
	}
	a.pageHint(p, pg, l.noun)
	return nil
}
