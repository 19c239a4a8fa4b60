package web

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

func row(metadata, metrics string) *hubv1alpha1.LeaderboardRow {
	r := &hubv1alpha1.LeaderboardRow{}
	if metadata != "" {
		r.Spec.Metadata = &apiextensionsv1.JSON{Raw: []byte(metadata)}
	}
	if metrics != "" {
		r.Spec.Metrics = &apiextensionsv1.JSON{Raw: []byte(metrics)}
	}
	return r
}

func TestLookup(t *testing.T) {
	v := decodeRow(row(`{"agent":"claude","a":{"b":{"c":1}},"x.y":"literal","x":{"y":"nested"},"n":null}`, `{"reward":0.5}`))
	tests := []struct {
		accessor string
		want     any
		found    bool
	}{
		{"metadata.agent", "claude", true},
		{"metrics.reward", json.Number("0.5"), true},
		{"metadata.a.b.c", json.Number("1"), true},
		{"metadata.x.y", "literal", true},
		{"metadata.n", nil, true},
		{"metadata.missing", nil, false},
		{"metadata.agent.deeper", nil, false},
		{"metrics.agent", nil, false},
		{"status.x", nil, false},
		{"metadata", nil, false},
		{"metadata.", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.accessor, func(t *testing.T) {
			got, found := v.lookup(tt.accessor)
			if diff := cmp.Diff(tt.want, got); diff != "" || found != tt.found {
				t.Errorf("lookup(%q) found=%v (want %v), (-want +got):\n%s", tt.accessor, found, tt.found, diff)
			}
		})
	}
}

func TestLookupLongestObjectKeyWins(t *testing.T) {
	// As the rank index reads it: "a.b" is the longest object prefix, so "a.b.c" is
	// looked up in it and not through "a".
	v := decodeRow(row(`{"a.b":{"x":1},"a":{"b":{"c":"deep"}}}`, ""))
	if got, ok := v.lookup("metadata.a.b.c"); ok {
		t.Errorf("lookup = %v, want missing", got)
	}
}

func TestLookupNestedWhenLiteralIsNotAnObject(t *testing.T) {
	// "a.b" exists but is a string, so "a.b.c" must be found by nesting through "a".
	v := decodeRow(row(`{"a.b":"x","a":{"b":{"c":"deep"}}}`, ""))
	got, ok := v.lookup("metadata.a.b.c")
	if !ok || got != "deep" {
		t.Errorf("lookup = %v, %v; want deep, true", got, ok)
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		name  string
		typ   hubv1alpha1.ColumnType
		value string
		want  Cell
	}{
		{"text", hubv1alpha1.ColumnText, `"claude <b>&"`, Cell{HTML: "claude &lt;b&gt;&amp;"}},
		{"text of a number", hubv1alpha1.ColumnText, `42`, Cell{HTML: "42"}},
		{"text of an object", hubv1alpha1.ColumnText, `{"k":"<v>"}`, Cell{HTML: `{&#34;k&#34;:&#34;\u003cv\u003e&#34;}`}},
		{"integer", hubv1alpha1.ColumnNumber, `1234567`, Cell{HTML: "1234567"}},
		{"negative integer", hubv1alpha1.ColumnNumber, `-3`, Cell{HTML: "-3"}},
		{"whole float", hubv1alpha1.ColumnNumber, `3.0`, Cell{HTML: "3", Title: "3.0"}},
		{"fraction below one", hubv1alpha1.ColumnNumber, `0.851234`, Cell{HTML: "0.8512", Title: "0.851234"}},
		{"short fraction", hubv1alpha1.ColumnNumber, `0.5`, Cell{HTML: "0.5"}},
		{"tenth stays a tenth", hubv1alpha1.ColumnNumber, `0.1`, Cell{HTML: "0.1"}},
		{"tiny", hubv1alpha1.ColumnNumber, `0.0000123456`, Cell{HTML: "1.235e-05", Title: "0.0000123456"}},
		{"above one", hubv1alpha1.ColumnNumber, `12.3456789`, Cell{HTML: "12.3457", Title: "12.3456789"}},
		{"trailing zeros trimmed", hubv1alpha1.ColumnNumber, `2.5000001`, Cell{HTML: "2.5", Title: "2.5000001"}},
		{"huge", hubv1alpha1.ColumnNumber, `1e300`, Cell{HTML: "1e+300", Title: "1e300"}},
		{"exponent form", hubv1alpha1.ColumnNumber, `1e3`, Cell{HTML: "1000", Title: "1e3"}},
		{"number column holding text", hubv1alpha1.ColumnNumber, `"n/a"`, Cell{HTML: "n/a"}},
		{"true", hubv1alpha1.ColumnBoolean, `true`, Cell{HTML: `<span class="bool yes" title="true" aria-label="true">✓</span>`}},
		{"false", hubv1alpha1.ColumnBoolean, `false`, Cell{HTML: `<span class="bool no" title="false" aria-label="false">✗</span>`}},
		{"boolean column holding text", hubv1alpha1.ColumnBoolean, `"yes"`, Cell{HTML: "yes"}},
		{"date", hubv1alpha1.ColumnDate, `"2026-11-21"`, Cell{HTML: `<time datetime="2026-11-21">2026-11-21</time>`}},
		{"instant in UTC", hubv1alpha1.ColumnDate, `"2026-11-21T23:32:09+01:00"`, Cell{HTML: `<time datetime="2026-11-21T22:32:09Z">2026-11-21T22:32:09Z</time>`}},
		{"instant without zone", hubv1alpha1.ColumnDate, `"2026-11-21T08:00:00"`, Cell{HTML: `<time datetime="2026-11-21T08:00:00Z">2026-11-21T08:00:00Z</time>`}},
		{"unix seconds", hubv1alpha1.ColumnDate, `1700000000`, Cell{HTML: `<time datetime="2023-11-14T22:13:20Z">2023-11-14T22:13:20Z</time>`}},
		{"unparseable date", hubv1alpha1.ColumnDate, `"last tuesday"`, Cell{HTML: "last tuesday"}},
		{"link string", hubv1alpha1.ColumnLink, `"https://example.com/a?b=1&c=2"`, Cell{HTML: `<a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener noreferrer">https://example.com/a?b=1&amp;c=2</a>`}},
		{"link object", hubv1alpha1.ColumnLink, `{"url":"http://example.com","label":"<Run> 1"}`, Cell{HTML: `<a href="http://example.com" rel="nofollow noopener noreferrer">&lt;Run&gt; 1</a>`}},
		{"link object without label", hubv1alpha1.ColumnLink, `{"url":"https://example.com"}`, Cell{HTML: `<a href="https://example.com" rel="nofollow noopener noreferrer">https://example.com</a>`}},
		{"javascript link is text", hubv1alpha1.ColumnLink, `"javascript:alert(1)"`, Cell{HTML: "javascript:alert(1)"}},
		{"javascript link object is its label", hubv1alpha1.ColumnLink, `{"url":"JavaScript:alert(1)","label":"click"}`, Cell{HTML: "click"}},
		{"data link is text", hubv1alpha1.ColumnLink, `"data:text/html,<script>x</script>"`, Cell{HTML: "data:text/html,&lt;script&gt;x&lt;/script&gt;"}},
		{"relative link is text", hubv1alpha1.ColumnLink, `"//evil.example/x"`, Cell{HTML: "//evil.example/x"}},
		{"link object without url", hubv1alpha1.ColumnLink, `{"label":"x"}`, Cell{HTML: `{&#34;label&#34;:&#34;x&#34;}`}},
		{"markdown", hubv1alpha1.ColumnMarkdown, `"**bold** and [docs](https://example.com)"`, Cell{HTML: `<div class="md"><p><strong>bold</strong> and <a href="https://example.com" rel="nofollow noopener noreferrer">docs</a></p>
</div>`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var value any
			dec := json.NewDecoder(bytesReader(tt.value))
			dec.UseNumber()
			if err := dec.Decode(&value); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, formatValue(tt.typ, value)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormatCellDisplayAccessor(t *testing.T) {
	r := decodeRow(row(`{"run":"https://example.com/run/7","name":"Run 7"}`, `{"reward":0.91234,"seen":null}`))
	tests := []struct {
		name string
		col  hubv1alpha1.Column
		want Cell
	}{
		{"accessor and type", hubv1alpha1.Column{Accessor: "metrics.reward", Type: hubv1alpha1.ColumnNumber}, Cell{HTML: "0.9123", Title: "0.91234"}},
		{"display accessor, display type", hubv1alpha1.Column{Accessor: "metrics.reward", Type: hubv1alpha1.ColumnNumber,
			DisplayAccessor: "metadata.run", DisplayType: hubv1alpha1.ColumnLink},
			Cell{HTML: `<a href="https://example.com/run/7" rel="nofollow noopener noreferrer">https://example.com/run/7</a>`}},
		{"display accessor keeps the type", hubv1alpha1.Column{Accessor: "metrics.reward", Type: hubv1alpha1.ColumnText,
			DisplayAccessor: "metadata.name"}, Cell{HTML: "Run 7"}},
		{"missing", hubv1alpha1.Column{Accessor: "metrics.cost", Type: hubv1alpha1.ColumnNumber}, Cell{HTML: "–", Empty: true}},
		{"null", hubv1alpha1.Column{Accessor: "metrics.seen", Type: hubv1alpha1.ColumnBoolean}, Cell{HTML: "–", Empty: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, formatCell(tt.col, r)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
