package web

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func bytesReader(s string) io.Reader { return strings.NewReader(s) }

// xssPayloads are markdown cells that try to run script, load style or pass an event
// handler, each the way a row could carry it.
var xssPayloads = []string{
	`<script>document.title="pwned"</script>`,
	`<img src=x onerror="document.title='pwned'">`,
	`before <img src=x onerror=alert(1)> after`,
	`<svg onload=alert(1)>`,
	`<style>body{display:none}</style>`,
	`<iframe src="javascript:alert(1)"></iframe>`,
	`<a href="javascript:alert(1)">x</a>`,
	`[click](javascript:alert(1))`,
	`[click](JaVaScRiPt:alert(1))`,
	`[click](javascript&#58;alert(1))`,
	`[click]( javascript:alert(1))`,
	`[click](vbscript:msgbox(1))`,
	`[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
	`<javascript:alert(1)>`,
	`![x](javascript:alert(1))`,
	`![x" onerror="alert(1)](https://example.com/a.png)`,
	`[x](https://example.com "a\" onmouseover=\"alert(1)")`,
	"```\n<script>alert(1)</script>\n```",
	"`<script>alert(1)</script>`",
	`<div onclick="alert(1)">**x**</div>`,
	"<details open ontoggle=alert(1)>",
	`[ref]: javascript:alert(1)` + "\n\n[ref]",
	`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
}

func TestMarkdownRunsNothing(t *testing.T) {
	for _, src := range xssPayloads {
		t.Run(src, func(t *testing.T) {
			checkSafeHTML(t, string(renderMarkdown(src)))
		})
	}
}

func TestMarkdownKeepsFormatting(t *testing.T) {
	tests := []struct{ src, want string }{
		{"**bold** _em_ `code`", "<p><strong>bold</strong> <em>em</em> <code>code</code></p>\n"},
		{"[docs](https://example.com/a)", `<p><a href="https://example.com/a" rel="nofollow noopener noreferrer">docs</a></p>` + "\n"},
		{"<https://example.com>", `<p><a href="https://example.com" rel="nofollow noopener noreferrer">https://example.com</a></p>` + "\n"},
		{"[bad](javascript:alert(1)) text", "<p>bad text</p>\n"},
		{"<me@example.com>", "<p>me@example.com</p>\n"},
		{"![chart](https://example.com/c.png)", `<p><a href="https://example.com/c.png" rel="nofollow noopener noreferrer">chart</a></p>` + "\n"},
		{"![chart](javascript:x)", "<p>chart</p>\n"},
		{"- a\n- b", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
		{"a <b>b</b>", "<p>a <!-- raw HTML omitted -->b<!-- raw HTML omitted --></p>\n"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			if got := string(renderMarkdown(tt.src)); got != tt.want {
				t.Errorf("renderMarkdown(%q) = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}

func TestMarkdownIsBounded(t *testing.T) {
	got := renderMarkdown(strings.Repeat("a", maxMarkdown*2))
	if n := strings.Count(string(got), "a"); n != maxMarkdown {
		t.Errorf("rendered %d characters of input, want %d", n, maxMarkdown)
	}
}

func FuzzMarkdown(f *testing.F) {
	for _, p := range xssPayloads {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkSafeHTML(t, string(renderMarkdown(src)))
	})
}

// allowedElements are what CommonMark without raw HTML can produce.
var allowedElements = map[string]bool{
	"p": true, "strong": true, "em": true, "code": true, "pre": true, "a": true, "ul": true, "ol": true,
	"li": true, "blockquote": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"hr": true, "br": true,
}

// checkSafeHTML parses rendered HTML like a browser and fails on any element or
// attribute that could run script, load a resource or style the page.
func checkSafeHTML(t *testing.T, out string) {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader([]byte(out)))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if !allowedElements[tok.Data] {
				t.Fatalf("element <%s> in %q", tok.Data, out)
			}
			for _, a := range tok.Attr {
				switch {
				case a.Key == "href" && tok.Data == "a":
					if !safeURL(a.Val) {
						t.Fatalf("href %q in %q", a.Val, out)
					}
				case a.Key == "rel" && tok.Data == "a", a.Key == "title" && tok.Data == "a",
					a.Key == "class" && tok.Data == "code", a.Key == "start" && tok.Data == "ol":
				default:
					t.Fatalf("attribute %s=%q on <%s> in %q", a.Key, a.Val, tok.Data, out)
				}
			}
		}
	}
}
