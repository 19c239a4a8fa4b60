package web

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxMarkdown bounds the markdown rendered for one cell: rows are written by board
// owners' tools, and a reader's page must not cost more than a few cells' worth.
const maxMarkdown = 16 << 10

// markdown renders CommonMark without raw HTML (goldmark's default omits it, which
// removes <script>, <style>, <iframe> and every on* attribute a row could carry) and
// with the link rewriting of safeLinks.
var markdown = goldmark.New(
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 100))),
)

// renderMarkdown returns the sanitised HTML of a markdown cell.
func renderMarkdown(src string) template.HTML {
	if len(src) > maxMarkdown {
		src = src[:maxMarkdown]
	}
	var buf bytes.Buffer
	if err := markdown.Convert([]byte(src), &buf); err != nil {
		// Rendering into a buffer cannot fail on I/O; fall back to the escaped text.
		return template.HTML(template.HTMLEscapeString(src))
	}
	return template.HTML(buf.String())
}

// safeURL reports whether a URL from a row may become an anchor: only absolute http
// and https URLs (no javascript:, data:, relative or protocol-relative URLs).
func safeURL(raw string) bool {
	if raw != strings.TrimSpace(raw) || strings.ContainsAny(raw, "\x00\t\r\n") {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https"
}

// rowLinkRel keeps links from rows from passing referrers or ranking credit.
const rowLinkRel = "nofollow noopener noreferrer"

// safeLinks rewrites links and images after parsing: a link whose URL is not safe
// becomes its text; an image becomes a link to it (a page of rows must not load
// pictures from anywhere a row names, and the CSP would block them anyway).
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	source := reader.Source()
	var targets []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.(type) {
		case *ast.Link, *ast.AutoLink, *ast.Image:
			targets = append(targets, n)
		}
		return ast.WalkContinue, nil
	})
	for _, n := range targets {
		parent := n.Parent()
		if parent == nil {
			continue
		}
		switch n := n.(type) {
		case *ast.Link:
			if safeURL(string(n.Destination)) {
				n.SetAttributeString("rel", []byte(rowLinkRel))
				continue
			}
			unwrap(parent, n)
		case *ast.Image:
			if safeURL(string(n.Destination)) {
				link := ast.NewLink()
				link.Destination = n.Destination
				link.Title = n.Title
				link.SetAttributeString("rel", []byte(rowLinkRel))
				for c := n.FirstChild(); c != nil; {
					next := c.NextSibling()
					link.AppendChild(link, c)
					c = next
				}
				parent.ReplaceChild(parent, n, link)
				continue
			}
			unwrap(parent, n)
		case *ast.AutoLink:
			if n.AutoLinkType == ast.AutoLinkURL && safeURL(string(n.URL(source))) {
				n.SetAttributeString("rel", []byte(rowLinkRel))
				continue
			}
			// Unsafe URLs and e-mail addresses are shown as text: no mailto: from rows.
			parent.ReplaceChild(parent, n, ast.NewString(n.Label(source)))
		}
	}
}

// unwrap replaces n by its children (the link text).
func unwrap(parent, n ast.Node) {
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}
